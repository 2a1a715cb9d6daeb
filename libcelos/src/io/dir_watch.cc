// inotify behind celos/dir_watch.h: one descriptor, one thread that waits in poll() for it and
// for a pipe that stop() writes to.
#include "celos/dir_watch.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "celos/mutex.h"

namespace celos {
namespace {

// IN_CREATE: a new directory (a missing path's parent appearing); files count when complete.
constexpr std::uint32_t kMask = IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE | IN_ONLYDIR;

class InotifyWatch final : public DirectoryWatch {
 public:
  InotifyWatch(int fd, std::array<int, 2> wake, DirectoryWatchCallbacks callbacks)
      : fd_(fd), wake_(wake), callbacks_(std::move(callbacks)), thread_([this] { loop(); }) {}

  ~InotifyWatch() override {
    [[maybe_unused]] auto n = ::write(wake_[1], "x", 1);
    thread_.join();
    ::close(fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

  Result<void> add(const std::string& dir) override EXCLUDES(mutex_) {
    const int wd = ::inotify_add_watch(fd_, dir.c_str(), kMask);
    if (wd < 0) {
      const int error = errno;
      return fail(fmt::format("cannot watch {}: {}{}", dir, std::strerror(error),
                              error == ENOSPC ? " (raise fs.inotify.max_user_watches)" : ""));
    }
    MutexLock lock(mutex_);
    dirs_[wd] = dir;
    return {};
  }

  void remove(const std::string& dir) override EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    for (auto it = dirs_.begin(); it != dirs_.end(); ++it) {
      if (it->second != dir) continue;
      ::inotify_rm_watch(fd_, it->first);
      dirs_.erase(it);
      return;
    }
  }

  std::size_t size() const override EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return dirs_.size();
  }

 private:
  void loop() {
    alignas(inotify_event) std::array<char, 16384> buffer{};
    for (;;) {
      pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        spdlog::error("directory watch stopped: poll: {}", std::strerror(errno));
        return;
      }
      if (fds[1].revents != 0) return;
      const ssize_t n = ::read(fd_, buffer.data(), buffer.size());
      if (n <= 0) continue;
      dispatch(buffer.data(), static_cast<std::size_t>(n));
    }
  }

  void dispatch(const char* data, std::size_t size) EXCLUDES(mutex_) {
    for (std::size_t at = 0; at + sizeof(inotify_event) <= size;) {
      const auto* event = reinterpret_cast<const inotify_event*>(data + at);
      at += sizeof(inotify_event) + event->len;
      if ((event->mask & IN_Q_OVERFLOW) != 0) {
        if (callbacks_.on_overflow) callbacks_.on_overflow();
        continue;
      }
      const bool new_dir = (event->mask & IN_CREATE) != 0 && (event->mask & IN_ISDIR) != 0;
      if (event->len == 0 || (!new_dir && (event->mask & (IN_MOVED_TO | IN_CLOSE_WRITE)) == 0)) {
        continue;
      }
      std::string dir;
      {
        MutexLock lock(mutex_);
        auto it = dirs_.find(event->wd);
        if (it == dirs_.end()) continue;
        dir = it->second;
      }
      if (callbacks_.on_file) callbacks_.on_file(dir, event->name);
    }
  }

  const int fd_;
  const std::array<int, 2> wake_;
  const DirectoryWatchCallbacks callbacks_;
  mutable Mutex mutex_;
  std::map<int, std::string> dirs_ GUARDED_BY(mutex_);
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<DirectoryWatch>> open_directory_watch(DirectoryWatchCallbacks callbacks) {
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return fail(fmt::format("inotify is not available: {}", std::strerror(errno)));
  std::array<int, 2> wake{-1, -1};
  if (::pipe2(wake.data(), O_CLOEXEC) != 0) {
    ::close(fd);
    return fail(fmt::format("cannot watch directories: pipe: {}", std::strerror(errno)));
  }
  return std::make_unique<InotifyWatch>(fd, wake, std::move(callbacks));
}

}  // namespace celos
