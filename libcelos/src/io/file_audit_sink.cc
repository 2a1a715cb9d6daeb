// <logs>/audit.log: one JSON line per mutating request (SPEC §13), rolled daily.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "celos/audit.h"

namespace celos {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

constexpr std::string_view kFile = "audit.log";

class FileAuditSink final : public AuditSink {
 public:
  FileAuditSink(std::string directory, int keep_days)
      : dir_(std::move(directory)), keep_days_(keep_days) {}

  void append(const AuditRecord& record) override {
    std::lock_guard lock(mutex_);
    roll_if_new_day(record.time);
    std::ofstream out(path(), std::ios::app | std::ios::binary);
    out << audit_record_to_json(record) << '\n';
    out.flush();
    if (!out) spdlog::error("cannot append to {}", path());
  }

  Result<std::vector<AuditRecord>> latest(std::optional<Time> since, std::size_t limit) override {
    std::lock_guard lock(mutex_);
    std::vector<AuditRecord> out;
    for (const std::string& file : files_newest_first()) {
      std::ifstream in(file, std::ios::binary);
      std::vector<std::string> lines;
      for (std::string line; std::getline(in, line);) {
        if (!line.empty()) lines.push_back(std::move(line));
      }
      for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        auto record = audit_record_from_json(*it);
        if (!record) continue;  // a torn last line of a crash: skip it
        if (since && record->time < *since) return out;  // older ones follow
        out.push_back(std::move(*record));
        if (out.size() >= limit) return out;
      }
    }
    return out;
  }

 private:
  std::string path() const { return dir_ + "/" + std::string(kFile); }

  // audit.log, then audit.log.<day> newest day first.
  std::vector<std::string> files_newest_first() const {
    std::vector<std::string> rolled;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(std::string(kFile) + ".", 0) == 0) rolled.push_back(entry.path().string());
    }
    std::sort(rolled.rbegin(), rolled.rend());
    rolled.insert(rolled.begin(), path());
    return rolled;
  }

  // The day of the records in audit.log: remembered, or read from its last record at start.
  std::optional<std::string> file_day() {
    if (day_) return day_;
    std::ifstream in(path(), std::ios::binary);
    for (std::string line; std::getline(in, line);) {
      if (auto record = audit_record_from_json(line)) day_ = format_day(record->time);
    }
    return day_;
  }

  void roll_if_new_day(Time now) {
    const std::string today = format_day(now);
    const auto day = file_day();
    day_ = today;
    if (!day || *day == today) return;
    std::error_code ec;
    fs::rename(path(), path() + "." + *day, ec);
    if (ec) spdlog::error("cannot roll {}: {}", path(), ec.message());
    auto rolled = files_newest_first();
    for (std::size_t i = 1 + static_cast<std::size_t>(keep_days_); i < rolled.size(); ++i) {
      fs::remove(rolled[i], ec);
    }
  }

  std::string dir_;
  int keep_days_;
  std::optional<std::string> day_;
  std::mutex mutex_;
};

}  // namespace

std::string audit_record_to_json(const AuditRecord& r) {
  return json::serialize(json::object{
      {"time", format_time(r.time)},
      {"node", r.node},
      {"client", r.client},
      {"token", r.token ? json::value(*r.token) : json::value(nullptr)},
      {"method", r.method},
      {"path", r.path},
      {"query", r.query},
      {"status", r.status}});
}

Result<AuditRecord> audit_record_from_json(std::string_view text) {
  boost::system::error_code ec;
  const json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return fail("audit record is not a JSON object", ErrorCode::kCorrupt);
  const json::object& o = v.get_object();
  AuditRecord r;
  auto str = [&o](const char* key) -> std::string {
    const json::value* x = o.if_contains(key);
    return x && x->is_string() ? std::string(x->get_string()) : std::string();
  };
  auto time = parse_time(str("time"));
  if (!time) return fail("audit record without a time", ErrorCode::kCorrupt);
  r.time = *time;
  r.node = str("node");
  r.client = str("client");
  if (const json::value* t = o.if_contains("token"); t && t->is_string()) r.token = str("token");
  r.method = str("method");
  r.path = str("path");
  r.query = str("query");
  if (const json::value* s = o.if_contains("status"); s && s->is_int64()) {
    r.status = static_cast<int>(s->get_int64());
  }
  return r;
}

std::unique_ptr<AuditSink> make_file_audit_sink(std::string directory, int keep_days) {
  return std::make_unique<FileAuditSink>(std::move(directory), keep_days);
}

}  // namespace celos
