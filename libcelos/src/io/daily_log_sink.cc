// spdlog's own daily sink names today's file after the date too, which breaks `tail -f` at
// midnight and the manual's "celos.log"; this one keeps celos.log and renames at the roll.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <spdlog/details/file_helper.h>
#include <spdlog/sinks/base_sink.h>
// Its template bodies: the compiled spdlog instantiates base_sink only for std::mutex.
#include <spdlog/sinks/base_sink-inl.h>
#include <sys/stat.h>

#include "celos/clock.h"
#include "celos/logging.h"
#include "celos/mutex.h"

namespace celos {
namespace {

namespace stdfs = std::filesystem;

// spdlog's base_sink takes its mutex_ (a celos::Mutex here) around sink_it_() and flush_().
class DailyLogSink final : public spdlog::sinks::base_sink<Mutex> {
 public:
  DailyLogSink(std::string directory, int keep_days, std::function<Time()> clock)
      : directory_(std::move(directory)),
        path_(directory_ + "/celos.log"),
        keep_days_(keep_days),
        clock_(clock ? std::move(clock)
                     : std::function<Time()>([] { return system_clock().now(); })) {
    const std::string today = format_day(clock_());
    // A celos.log from an earlier day is that day's file: roll it before appending.
    struct stat st;
    if (::stat(path_.c_str(), &st) == 0) {
      const Time modified{std::chrono::seconds(st.st_mtim.tv_sec)};
      if (format_day(modified) != today) roll(format_day(modified));
    }
    day_ = today;
    file_.open(path_, false);
  }

  // After logrotate (or an operator) moved celos.log away: continue in a new celos.log.
  void reopen() EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    file_.close();
    file_.open(path_, false);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override REQUIRES(mutex_) {
    const std::string today = format_day(clock_());
    if (today != day_) {
      file_.close();
      roll(day_);
      day_ = today;
      file_.open(path_, false);
    }
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    file_.write(formatted);
  }

  void flush_() override REQUIRES(mutex_) { file_.flush(); }

 private:
  void roll(const std::string& day) REQUIRES(mutex_) {
    std::error_code ec;
    stdfs::rename(path_, path_ + "." + day, ec);  // on failure keep appending: never lose lines
    // Not through spdlog: this sink is inside the logger that would report it.
    if (ec)
      std::fprintf(stderr, "celos: cannot roll %s to %s.%s: %s\n", path_.c_str(), path_.c_str(),
                   day.c_str(), ec.message().c_str());
    prune();
  }

  void prune() REQUIRES(mutex_) {
    std::vector<std::string> rolled;
    std::error_code ec;
    for (const auto& entry : stdfs::directory_iterator(directory_, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("celos.log.", 0) == 0) rolled.push_back(name);
    }
    if (static_cast<int>(rolled.size()) <= keep_days_) return;
    std::sort(rolled.begin(), rolled.end());  // yyyy-mm-dd sorts by date
    for (std::size_t i = 0; i + keep_days_ < rolled.size(); ++i) {
      stdfs::remove(directory_ + "/" + rolled[i], ec);
      if (ec)
        std::fprintf(stderr, "celos: cannot remove the expired log %s/%s: %s\n", directory_.c_str(),
                     rolled[i].c_str(), ec.message().c_str());
    }
  }

  std::string directory_;
  std::string path_;
  int keep_days_;
  std::function<Time()> clock_;
  std::string day_ GUARDED_BY(mutex_);
  spdlog::details::file_helper file_ GUARDED_BY(mutex_);
};

}  // namespace

bool reopen_daily_log_sink(spdlog::sinks::sink& sink) {
  auto* daily = dynamic_cast<DailyLogSink*>(&sink);
  if (daily == nullptr) return false;
  daily->reopen();
  return true;
}

std::shared_ptr<spdlog::sinks::sink> make_daily_log_sink(std::string directory, int keep_days,
                                                         std::function<Time()> clock) {
  return std::make_shared<DailyLogSink>(std::move(directory), keep_days, std::move(clock));
}

}  // namespace celos
