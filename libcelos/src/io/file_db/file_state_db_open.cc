// Opening the file state database for a server (celos/state_db.h): the directory lock of
// SPEC §11 and the removal of the temporaries that crashed writes left behind.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "celos/file_system.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"

namespace celos {

// In file_state_db.cc: the database, keeping `hold` alive as long as itself; its check() is
// `probe`.
std::unique_ptr<StateDatabase> make_file_state_database_holding(
    std::shared_ptr<FileSystem> fs, std::string root, std::shared_ptr<void> hold,
    std::function<Result<void>()> probe);

namespace {

namespace fs = std::filesystem;

// An open, flock()ed lock file; closing the descriptor releases the lock (also on a crash).
class DirectoryLock {
 public:
  DirectoryLock(int fd, std::string root) : fd_(fd), root_(std::move(root)) {}
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  ~DirectoryLock() { ::close(fd_); }

  // /health/ready's probe (SPEC §13): the directory is still a directory, its lock file is still
  // the one we locked (a directory moved away and replaced, or a lock file removed, would let a
  // second server in), and a file can be created in it (a read-only remount, a full disk).
  Result<void> check() const {
    struct stat dir {};
    if (::stat(root_.c_str(), &dir) != 0) {
      return fail(fmt::format("state database directory {}: {}", root_, std::strerror(errno)));
    }
    if (!S_ISDIR(dir.st_mode)) {
      return fail(fmt::format("state database directory {} is no longer a directory", root_));
    }
    if (auto lock = check_lock(); !lock) return lock;
    return check_writable();
  }

 private:
  Result<void> check_lock() const {
    const std::string path = root_ + "/.lock";
    struct stat held {
    }, named{};
    if (::fstat(fd_, &held) != 0) {
      return fail(fmt::format("lock file {}: {}", path, std::strerror(errno)));
    }
    if (::stat(path.c_str(), &named) != 0 || named.st_dev != held.st_dev ||
        named.st_ino != held.st_ino) {
      return fail(
          fmt::format("state database directory {} was replaced or its lock file {} "
                      "removed: this server's lock no longer guards it (restart it)",
                      root_, path));
    }
    return {};
  }

  Result<void> check_writable() const {
    const std::string path = fmt::format("{}/.probe-{}", root_, ::getpid());
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int error = fd < 0 ? errno : 0;
    if (fd >= 0) {
      if (::write(fd, "\n", 1) != 1) error = errno;
      if (::close(fd) != 0 && error == 0) error = errno;
      ::unlink(path.c_str());
    }
    if (error != 0) {
      return fail(fmt::format("state database directory {} is not writable: {}", root_,
                              std::strerror(error)));
    }
    return {};
  }

  int fd_;
  std::string root_;
};

std::string holder_of(int fd) {
  char buffer[32] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  std::string text = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.empty() || text.find_first_not_of("0123456789") != std::string::npos ? "" : text;
}

// Writes our pid into the lock file through a descriptor of its own, closed at once: the lock
// itself is held on a read-only descriptor, so the server keeps no file of the directory open
// for writing (a read-only remount by the administrator is then possible, and seen by check()).
void write_pid(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  const std::string pid = fmt::format("{}\n", ::getpid());
  const bool written = fd >= 0 && ::ftruncate(fd, 0) == 0 &&
                       ::pwrite(fd, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size());
  if (!written) spdlog::warn("cannot write the pid into {}: {}", path, std::strerror(errno));
  if (fd >= 0) ::close(fd);
}

Result<std::shared_ptr<DirectoryLock>> lock_directory(const std::string& root) {
  const std::string path = root + "/.lock";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return fail(fmt::format("cannot open the lock file {} of state database directory {}: {}", path,
                            root, std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string holder = holder_of(fd);
    ::close(fd);
    if (error != EWOULDBLOCK) {
      return fail(fmt::format("cannot lock {}: {}", path, std::strerror(error)));
    }
    return fail(
        fmt::format("state database directory {} is in use by another celos-server "
                    "({}; lock file {})",
                    root, holder.empty() ? "pid unknown" : "pid " + holder, path));
  }
  auto lock = std::make_shared<DirectoryLock>(fd, root);
  write_pid(path);
  return lock;
}

// `.<name>.tmp-<pid>-<n>`: LocalFileSystem::write_files' temporaries.
bool is_temporary_name(const std::string& name) {
  return name.size() > 1 && name.front() == '.' && name.find(".tmp-") != std::string::npos;
}

}  // namespace

std::size_t remove_stale_temporaries(const std::string& root) {
  std::size_t removed = 0;
  for (const char* tree : {"state", "rerun", "paused"}) {
    std::error_code ec;
    fs::recursive_directory_iterator it(fs::path(root) / tree, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (!is_temporary_name(it->path().filename().string())) continue;
      std::error_code type_error;
      if (!it->is_regular_file(type_error)) continue;
      std::error_code remove_error;
      if (fs::remove(it->path(), remove_error)) ++removed;
    }
  }
  return removed;
}

Result<std::unique_ptr<StateDatabase>> open_file_state_database(std::shared_ptr<FileSystem> fs,
                                                                std::string root) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return fail(fmt::format("state database directory {} does not exist", root));
  }
  auto lock = lock_directory(root);
  if (!lock) return tl::unexpected(lock.error());
  const std::size_t removed = remove_stale_temporaries(root);
  if (removed > 0) {
    spdlog::info("removed {} stale temporary files of interrupted writes from {}", removed, root);
  }
  std::shared_ptr<DirectoryLock> held = std::move(*lock);
  auto probe = [held = held.get()] { return held->check(); };
  return make_file_state_database_holding(std::move(fs), std::move(root), std::move(held),
                                          std::move(probe));
}

}  // namespace celos
