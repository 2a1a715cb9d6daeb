// Job-end events of command jobs (issue 28): a command job's wrapper moves a file named after
// the job into <jobs>/.events when the job ends (celos/command_service.h,
// command_job_events_dir), holding its workflow id. This watcher creates that directory,
// watches it with inotify, and reports each file as a job event of its workflow (then removes
// it). Files left from before a start, or missed when the kernel's queue overflowed, are taken
// by a scan of the directory; without inotify nothing is watched and the periodic step finds the
// jobs' ends as before.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "celos/dir_watch.h"
#include "celos/event_source.h"

namespace celos {

class JobEndWatcher {
 public:
  // Never fails: a problem is logged and the watcher does nothing (the periodic step remains).
  // Files are taken only while `active()` (a cluster's leader: standbys sharing --jobs-dir leave
  // them to it).
  JobEndWatcher(std::string jobs_dir, EventSink sink, std::function<bool()> active);
  JobEndWatcher(const JobEndWatcher&) = delete;
  JobEndWatcher& operator=(const JobEndWatcher&) = delete;
  ~JobEndWatcher();

  // Reports and removes every complete file in the directory (at start and after an overflow).
  void scan();

 private:
  void take(const std::string& name);

  std::string dir_;
  EventSink sink_;
  std::function<bool()> active_;
  std::unique_ptr<DirectoryWatch> watch_;
};

}  // namespace celos
