// Files that appear in local directories, as they appear (Linux inotify; issue 28's job-end
// events and local data paths).
//
// A file counts when it is moved into a watched directory or closed after writing there (a
// complete file, never a half-written one when the writer renames it in); a directory counts
// when it is created there. The callbacks run on
// the watch's own thread, one at a time, and must be quick (queue the work). When the kernel's
// queue overflowed (IN_Q_OVERFLOW) events were lost: `on_overflow` runs and the owner rescans
// or falls back to polling (issue 28: a lost event costs the periodic step's latency).
// Thread-safe; the destructor stops the thread (callbacks have ended when it returns).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "celos/error.h"

namespace celos {

struct DirectoryWatchCallbacks {
  std::function<void(const std::string& dir, const std::string& name)> on_file;
  std::function<void()> on_overflow;
};

class DirectoryWatch {
 public:
  virtual ~DirectoryWatch() = default;
  // Starts watching `dir` (idempotent). An error names the directory (missing, not permitted,
  // the watch limit reached: fs.inotify.max_user_watches).
  [[nodiscard]] virtual Result<void> add(const std::string& dir) = 0;
  // Stops watching `dir` (nothing if not watched).
  virtual void remove(const std::string& dir) = 0;
  // Directories watched now.
  virtual std::size_t size() const = 0;
};

// An error when inotify is not available (then events come only from elsewhere).
[[nodiscard]] Result<std::unique_ptr<DirectoryWatch>> open_directory_watch(
    DirectoryWatchCallbacks callbacks);

}  // namespace celos
