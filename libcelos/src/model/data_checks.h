// The data checks of one step in bulk (issue 28). Before the step's triggers are evaluated
// concurrently, a probe evaluates them once with every path answered "missing" (PathProbe), which
// tells which paths they will ask; DirectoryListings then answers the paths that share a parent
// directory on a file system that prefers_listing() (WebHDFS, SFTP) from one listing of that
// directory, and every other path with exists(), as before. The answers are the same: the
// FileSystem contract checks that listings and exists() agree. Internal to model/.
#pragma once

#include <atomic>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "celos/file_system.h"
#include "celos/mutex.h"
#include "celos/trigger.h"
#include "model/data_check_memory.h"

namespace celos::detail {

using PathKey = std::pair<std::string, std::string>;  // file system URI, path

// A directory is listed when at least this many of the step's paths are in it: below, one
// exists() per path costs no more.
inline constexpr std::size_t kMinPathsToList = 2;

// "/a/b/c" -> {"/a/b", "c"}; nothing for a path that is not plain (relative, a trailing or a
// double slash, "." or ".."), which is asked with exists() as it is.
std::optional<std::pair<std::string, std::string>> split_plain_path(const std::string& path);

class DirectoryListings {
 public:
  // `memory` (may be null) remembers the directories too big to list.
  DirectoryListings(Time now, DataCheckMemory* memory) : now_(now), memory_(memory) {}

  // The paths the step will ask; call before the concurrent asks (not thread-safe).
  void plan(const std::vector<PathKey>& paths);

  // Does `path` exist on `fs` (the file system of `uri`)? From the listing of its parent when
  // planned (the first asker lists; the others wait for it): a directory that does not exist
  // holds nothing, and when the listing fails otherwise (not a directory, refused), each path is
  // asked with exists() after all; unreachable is that error. Thread-safe.
  Result<bool> exists(const std::string& uri, FileSystem& fs, const std::string& path);

  // The (URI, directory) pairs plan() chose to list.
  const std::set<PathKey>& planned() const { return planned_; }

  // Lists a planned directory ahead of the asks, on a task of its own (when `fs` prefers
  // listing), so that an ask finds it listed instead of holding a thread while another task's
  // round trip runs. The listing's error, if it failed (the asks will see it too). Thread-safe.
  Result<void> prefetch(const std::string& uri, FileSystem& fs, const std::string& dir);

  // File-system calls made (listings and exists()).
  int calls() const { return calls_.load(); }

 private:
  using Names = std::shared_ptr<const std::set<std::string>>;  // null: ask each path
  Result<Names> listing(const std::string& uri, FileSystem& fs, const std::string& dir)
      EXCLUDES(mutex_);
  Result<Names> list_names(const std::string& uri, FileSystem& fs, const std::string& dir);

  Time now_;
  DataCheckMemory* memory_;
  std::set<PathKey> planned_;  // (URI, directory) to list; set by plan() before the asks
  Mutex mutex_;
  std::map<PathKey, std::shared_future<Result<Names>>> listings_ GUARDED_BY(mutex_);
  std::atomic<int> calls_{0};
};

// A trigger context that forwards every question to another one; subclasses change some.
class ForwardingTriggerContext : public TriggerContext {
 public:
  explicit ForwardingTriggerContext(TriggerContext& inner) : inner_(inner) {}
  Time now() const override { return inner_.now(); }
  Result<bool> path_exists(const std::string& fs_uri, const std::string& path) override {
    return inner_.path_exists(fs_uri, path);
  }
  Result<bool> slot_succeeded(const std::string& w, Time t) override {
    return inner_.slot_succeeded(w, t);
  }
  Result<SlotStatus> slot_status(const std::string& w, Time t) override {
    return inner_.slot_status(w, t);
  }
  Result<std::vector<SlotState>> stored_slots(const std::string& w, Time s, Time e) override {
    return inner_.stored_slots(w, s, e);
  }
  Result<bool> instance_announced(const std::string& d, Time t) override {
    return inner_.instance_announced(d, t);
  }
  Result<std::vector<Time>> announced_instances(const std::string& d, Time s, Time e) override {
    return inner_.announced_instances(d, s, e);
  }

 private:
  TriggerContext& inner_;
};

// The probe: records the paths asked and answers "missing" without asking; the rest (slot
// states, announcements: the state database, cached for the step) is forwarded.
class PathProbe final : public ForwardingTriggerContext {
 public:
  using ForwardingTriggerContext::ForwardingTriggerContext;
  Result<bool> path_exists(const std::string& fs_uri, const std::string& path) override {
    asked.emplace_back(fs_uri, path);
    return false;
  }
  std::vector<PathKey> asked;
};

}  // namespace celos::detail
