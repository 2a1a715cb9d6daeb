// <logs>/audit.log: one JSON line per mutating request (SPEC §13), rolled daily, read backwards.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "celos/audit.h"
#include "celos/mutex.h"
#include "io/backward_lines.h"

namespace celos {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFile = "audit.log";

class FileAuditSink final : public AuditSink {
 public:
  FileAuditSink(std::string directory, int keep_days)
      : dir_(std::move(directory)), keep_days_(std::max(keep_days, 0)) {
    MutexLock lock(mutex_);
    remove_expired();
  }

  void append(const AuditRecord& record) override EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    roll_if_new_day(record.time);
    const std::string line = audit_record_to_json(record) + '\n';
    // One write(2) of the whole line with O_APPEND: concurrent writers never interleave.
    const int fd = ::open(path().c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0) {
      spdlog::error("cannot open {} to append: {}", path(), std::strerror(errno));
      return;
    }
    ssize_t written = 0;
    do {
      written = ::write(fd, line.data(), line.size());
    } while (written < 0 && errno == EINTR);
    if (written != static_cast<ssize_t>(line.size())) {
      spdlog::error("cannot append to {}: {}", path(),
                    written < 0 ? std::strerror(errno) : "short write (disk full?)");
    }
    ::close(fd);
  }

  // Newest first: audit.log, then the rolled files newest day first, each read from its end.
  Result<std::vector<AuditRecord>> latest(std::optional<Time> since, std::size_t limit) override {
    std::vector<std::string> files;
    {
      MutexLock lock(mutex_);  // not in the middle of a roll
      files = files_newest_first();
    }
    std::vector<AuditRecord> out;
    bool done = limit == 0;
    for (const std::string& file : files) {
      if (done) break;
      auto read = for_each_line_backwards(file, [&](std::string_view line) {
        auto record = audit_record_from_json(line);
        if (!record) return true;  // a torn last line of a crash: skip it
        if (since && record->time < *since) return !(done = true);  // older ones follow
        out.push_back(std::move(*record));
        return !(done = out.size() >= limit);
      });
      if (!read) return tl::unexpected(read.error());
    }
    return out;
  }

 private:
  std::string path() const { return dir_ + "/" + std::string(kFile); }

  // audit.log, then audit.log.<day> newest day first.
  std::vector<std::string> files_newest_first() const REQUIRES(mutex_) {
    std::vector<std::string> rolled;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(std::string(kFile) + ".", 0) == 0) rolled.push_back(entry.path().string());
    }
    if (ec) spdlog::error("cannot list {}: {}", dir_, ec.message());
    std::sort(rolled.rbegin(), rolled.rend());
    rolled.insert(rolled.begin(), path());
    return rolled;
  }

  // The day of the records in audit.log: remembered, or read from its last record at start.
  std::optional<std::string> file_day() REQUIRES(mutex_) {
    if (day_) return day_;
    std::optional<std::string> found;
    auto read = for_each_line_backwards(path(), [&found](std::string_view line) {
      auto record = audit_record_from_json(line);
      if (record) found = format_day(record->time);
      return !record;  // the last readable record decides
    });
    if (!read) spdlog::error("{}", read.error().message);
    day_ = std::move(found);
    return day_;
  }

  void roll_if_new_day(Time now) REQUIRES(mutex_) {
    const std::string today = format_day(now);
    const auto day = file_day();
    day_ = today;
    if (!day || *day == today) return;
    std::error_code ec;
    fs::rename(path(), path() + "." + *day, ec);
    if (ec) spdlog::error("cannot roll {} to {}.{}: {}", path(), path(), *day, ec.message());
    remove_expired();
  }

  // Keeps the newest `keep_days_` rolled files.
  void remove_expired() REQUIRES(mutex_) {
    auto rolled = files_newest_first();
    for (std::size_t i = 1 + static_cast<std::size_t>(keep_days_); i < rolled.size(); ++i) {
      std::error_code ec;
      fs::remove(rolled[i], ec);
      if (ec) spdlog::error("cannot remove the expired audit file {}: {}", rolled[i], ec.message());
    }
  }

  std::string dir_;
  int keep_days_;
  // Guards day_ and the files: a roll (rename, expiry) is never half seen by latest().
  Mutex mutex_;
  std::optional<std::string> day_ GUARDED_BY(mutex_);
};

}  // namespace

std::unique_ptr<AuditSink> make_file_audit_sink(std::string directory, int keep_days) {
  return std::make_unique<FileAuditSink>(std::move(directory), keep_days);
}

}  // namespace celos
