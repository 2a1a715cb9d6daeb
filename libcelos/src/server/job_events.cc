// Command jobs' end events (server/job_events.h).
#include "server/job_events.h"

#include <filesystem>
#include <fstream>
#include <system_error>

#include <spdlog/spdlog.h>

#include "celos/command_service.h"

namespace celos {

JobEndWatcher::JobEndWatcher(std::string jobs_dir, EventSink sink, std::function<bool()> active)
    : dir_(command_job_events_dir(jobs_dir)), sink_(std::move(sink)), active_(std::move(active)) {
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  if (error) {
    spdlog::warn("job-end events off: cannot create {}: {}", dir_, error.message());
    return;
  }
  auto watch = open_directory_watch(
      {.on_file = [this](const std::string&, const std::string& name) { take(name); },
       .on_overflow =
           [this] {
             spdlog::warn("job-end events: the inotify queue overflowed; rescanning {}", dir_);
             scan();
           }});
  if (!watch) {
    spdlog::warn("job-end events off: {}", watch.error().message);
    return;
  }
  if (auto added = (*watch)->add(dir_); !added) {
    spdlog::warn("job-end events off: {}", added.error().message);
    return;
  }
  watch_ = std::move(*watch);
  scan();  // after the watch began: nothing falls between the two
}

JobEndWatcher::~JobEndWatcher() { watch_.reset(); }

void JobEndWatcher::scan() {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, error)) {
    take(entry.path().filename().string());
  }
}

void JobEndWatcher::take(const std::string& name) {
  if (name.empty() || name[0] == '.') return;  // a wrapper's file being written
  if (active_ && !active_()) return;
  const std::string path = dir_ + "/" + name;
  std::string workflow;
  {
    std::ifstream in(path);
    if (!in || !std::getline(in, workflow)) return;  // taken already (a scan and the watch)
  }
  std::error_code error;
  if (!std::filesystem::remove(path, error)) return;  // the other taker reports it
  if (!workflow.empty()) sink_(EventSource::kJob, {workflow});
}

}  // namespace celos
