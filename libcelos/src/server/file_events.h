// File events (issue 28): a file appearing under a local path that a step found missing
// (hdfsCheckTrigger on file: paths, the done flags of file: datasets) wakes the workflows that
// check local paths at once, instead of at the next periodic step.
//
// LocalPathWatch is a FileSystemResolver in front of the scheduler's: every local exists() that
// answers "no" has its nearest existing ancestor directory watched with inotify (at most
// `max_dirs` directories; beyond them, new paths wait for the periodic step as before). A file or
// directory created or moved into a watched directory calls `on_event`. When the kernel's queue
// overflows, events were lost: `on_event` is called too (the waiting workflows are stepped, and
// the periodic step remains the safety net). Thread-safe (the step checks paths concurrently).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "celos/dir_watch.h"
#include "celos/file_system.h"
#include "celos/mutex.h"

namespace celos {

class LocalPathWatch final : public FileSystemResolver {
 public:
  // `default_fs`: "file" when fs.defaultFS is the local file system (then "" URIs are local).
  LocalPathWatch(FileSystemResolver& inner, std::string default_fs, std::size_t max_dirs = 4096);
  ~LocalPathWatch() override;
  LocalPathWatch(const LocalPathWatch&) = delete;
  LocalPathWatch& operator=(const LocalPathWatch&) = delete;

  Result<std::shared_ptr<FileSystem>> resolve(std::string_view uri) override;

  // Set once, before the first step.
  void set_on_event(std::function<void()> on_event) EXCLUDES(mutex_);
  bool is_local(std::string_view uri) const;
  // A local path found missing: watch its nearest existing ancestor.
  void note_missing(const std::string& path) EXCLUDES(mutex_);
  std::size_t watched() const EXCLUDES(mutex_);

 private:
  void on_change(const std::string& dir) EXCLUDES(mutex_);

  FileSystemResolver& inner_;
  const std::string default_fs_;
  const std::size_t max_dirs_;
  std::unique_ptr<DirectoryWatch> watch_;
  mutable Mutex mutex_;
  std::function<void()> on_event_ GUARDED_BY(mutex_);
  std::set<std::string> watched_ GUARDED_BY(mutex_);
  // A missing path's parent -> the ancestor watched for it (forgotten when that one changes).
  std::map<std::string, std::string> watched_for_ GUARDED_BY(mutex_);
  bool full_logged_ GUARDED_BY(mutex_) = false;
};

}  // namespace celos
