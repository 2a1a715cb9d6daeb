// The local file system adapter. Writes follow the classic durable-replace recipe (write a
// temporary file beside the target, sync, rename over it, sync the directory), with the sync of
// a large batch done once for the whole file system (syncfs) instead of once per file: that is
// what keeps the first step of a thousand workflows from costing a thousand fsyncs.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "celos/file_system.h"

namespace celos {
namespace {

namespace stdfs = std::filesystem;

// Below this many files a batch syncs each file; above, one syncfs() is cheaper.
constexpr std::size_t kSyncfsThreshold = 16;
// From this many files a batch is written by up to kWriteThreads threads.
constexpr std::size_t kParallelThreshold = 256;
constexpr std::size_t kWriteThreads = 4;

std::string errno_text(int err) { return std::strerror(err); }

tl::unexpected<Error> io_error(std::string_view what, const std::string& path, int err) {
  return fail(fmt::format("{} {}: {}", what, path, errno_text(err)),
              err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kFailed);
}

std::string parent_dir(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// fsync() of one file or directory, or syncfs() of the whole file system it is on.
Result<void> sync_path(const std::string& path, bool whole_file_system = false) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open for sync", path, errno);
  const int rc = whole_file_system ? ::syncfs(fd) : ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return io_error("cannot sync", path, err);
  return {};
}

// Runs `work(i)` for every i in [0, n) and returns the first error; a big batch on a few
// threads: writing thousands of small files is bound by the kernel's work per file (path
// lookups, inode creation and eviction), which runs in parallel in different directories.
// After an error the other threads stop at their next file.
template <class Work>
Result<void> for_each_index(std::size_t n, Work&& work) {
  const std::size_t cores = std::max(1U, std::thread::hardware_concurrency());
  const std::size_t width = n < kParallelThreshold ? 1 : std::min(kWriteThreads, cores);
  std::vector<Result<void>> results(width);
  std::atomic<bool> failed{false};
  auto part = [&](std::size_t t) {
    for (std::size_t i = t; i < n && !failed.load(std::memory_order_relaxed); i += width) {
      if (auto done = work(i); !done) {
        results[t] = std::move(done);
        failed = true;
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < width; ++t) threads.emplace_back(part, t);
  part(0);
  for (std::thread& thread : threads) thread.join();
  for (Result<void>& r : results) {
    if (!r) return r;
  }
  return {};
}

Result<void> write_all(int fd, const std::string& data, const std::string& path) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("cannot write", path, errno);
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

class LocalFileSystem final : public FileSystem {
 public:
  Result<bool> exists(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) return true;
    if (errno == ENOENT || errno == ENOTDIR) return false;
    return io_error("cannot stat", path, errno);
  }

  Result<std::string> read(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return io_error("cannot open", path, errno);
    std::string data;
    char buffer[16384];
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        ::close(fd);
        return io_error("cannot read", path, err);
      }
      if (n == 0) break;
      data.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return data;
  }

  Result<void> write_files(const std::vector<FileWrite>& all) override {
    return write_files_after(all, {});
  }

  // The durable-replace recipe; `before_visible` runs between the contents' sync and the renames.
  Result<void> write_files_after(const std::vector<FileWrite>& all,
                                 const std::function<Result<void>()>& before_visible) override {
    if (all.empty()) return before_visible ? before_visible() : Result<void>{};
    // A path written twice in one batch gets its last data, as if written in order.
    const auto merged = merge_by_path(all, /*append=*/false);
    const std::vector<FileWrite>& files = merged ? *merged : all;
    // Small batches: fsync each file and each directory. Big batches: one syncfs() before the
    // renames (contents durable) and one after (directory entries durable); syncing thousands of
    // directories one by one costs milliseconds each.
    const bool batch = files.size() >= kSyncfsThreshold;
    std::set<std::string> directories;
    if (auto made = create_parents(files, batch, directories); !made) return made;
    std::vector<std::string> temps(files.size());
    auto cleanup = [&] {
      for (const std::string& temp : temps) {
        if (!temp.empty()) ::unlink(temp.c_str());
      }
    };
    auto created = for_each_index(files.size(), [&](std::size_t i) -> Result<void> {
      const FileWrite& f = files[i];
      const std::string dir = parent_dir(f.path);
      std::string temp = fmt::format("{}/.{}.tmp-{}-{}", dir, f.path.substr(dir.size() + 1),
                                     ::getpid(), counter_.fetch_add(1));
      const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) return io_error("cannot create", temp, errno);
      temps[i] = std::move(temp);
      auto written = write_all(fd, f.data, temps[i]);
      if (written && !batch && ::fsync(fd) != 0) written = io_error("cannot sync", temps[i], errno);
      ::close(fd);
      return written;
    });
    if (created && batch) created = sync_path(temps.front(), /*whole_file_system=*/true);
    if (created && before_visible) created = before_visible();
    if (!created) {
      cleanup();
      return created;
    }
    auto renamed = for_each_index(files.size(), [&](std::size_t i) -> Result<void> {
      if (::rename(temps[i].c_str(), files[i].path.c_str()) != 0) {
        return io_error("cannot rename into place", files[i].path, errno);
      }
      temps[i].clear();
      return {};
    });
    if (!renamed) {
      cleanup();  // the temporary files not renamed yet
      return renamed;
    }
    if (batch) return sync_path(files.front().path, /*whole_file_system=*/true);
    for (const std::string& dir : directories) {
      if (auto synced = sync_path(dir); !synced) return synced;
    }
    return {};
  }

  Result<void> append_files(const std::vector<FileWrite>& all) override {
    return append(all, /*sync=*/true);
  }

  Result<void> append_files_unsynced(const std::vector<FileWrite>& all) override {
    return append(all, /*sync=*/false);
  }

  // fsync() of each file and of its directory (its name, when it is new): after a sync of the
  // whole file system both find nothing left to write.
  Result<void> sync_files(const std::vector<std::string>& paths) override {
    std::set<std::string> directories;
    for (const std::string& path : paths) {
      if (auto synced = sync_path(path); !synced) return synced;
      directories.insert(parent_dir(path));
    }
    for (const std::string& dir : directories) {
      if (auto synced = sync_path(dir); !synced) return synced;
    }
    return {};
  }

  Result<void> make_dirs(const std::string& path) override { return create_dirs(path, true); }

  Result<void> remove(const std::string& path) override {
    std::error_code ec;
    stdfs::remove_all(path, ec);
    if (ec) return fail(fmt::format("cannot remove {}: {}", path, ec.message()));
    return {};
  }

  Result<void> rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) {
      return fail(fmt::format("cannot rename {} to {}: {}", from, to, errno_text(errno)),
                  errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kFailed);
    }
    return sync_path(parent_dir(to));
  }

  Result<FileStatus> file_status(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return io_error("cannot stat", path, errno);
    const std::size_t slash = path.find_last_of('/');
    FileStatus status{slash == std::string::npos ? path : path.substr(slash + 1),
                      S_ISDIR(st.st_mode), static_cast<std::uint64_t>(st.st_size)};
    status.mtime_ns = std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
    return status;
  }

  Result<std::vector<FileStatus>> list(const std::string& directory) override {
    return read_directory(directory, /*names_only=*/false);
  }

  Result<std::vector<FileStatus>> list_names(const std::string& directory) override {
    return read_directory(directory, /*names_only=*/true);
  }

 private:
  // The entries of `directory`, sorted by name. `names_only`: a stat(2) only where readdir does
  // not say whether the entry is a directory (DT_UNKNOWN, or a symbolic link, which list()
  // follows), so sizes and mtimes stay 0.
  static Result<std::vector<FileStatus>> read_directory(const std::string& directory,
                                                        bool names_only) {
    DIR* dir = ::opendir(directory.c_str());
    if (dir == nullptr) return io_error("cannot list", directory, errno);
    std::vector<FileStatus> entries;
    while (const dirent* e = ::readdir(dir)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      FileStatus status{name, e->d_type == DT_DIR, 0};
      struct stat st;
      const bool type_unknown = e->d_type == DT_UNKNOWN || e->d_type == DT_LNK;
      if ((!names_only || type_unknown) && ::fstatat(::dirfd(dir), e->d_name, &st, 0) == 0) {
        status.is_directory = S_ISDIR(st.st_mode);
        if (!names_only) {
          status.size = static_cast<std::uint64_t>(st.st_size);
          status.mtime_ns = std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
        }
      }
      entries.push_back(std::move(status));
    }
    ::closedir(dir);
    std::sort(entries.begin(), entries.end(),
              [](const FileStatus& a, const FileStatus& b) { return a.name < b.name; });
    return entries;
  }

  // Appends in place (O_APPEND); `sync`: durable when this returns (append_files).
  Result<void> append(const std::vector<FileWrite>& all, bool sync) {
    if (all.empty()) return {};
    // One write per file with its appends in order: threads never share a file.
    const auto merged = merge_by_path(all, /*append=*/true);
    const std::vector<FileWrite>& files = merged ? *merged : all;
    const bool batch = files.size() >= kSyncfsThreshold;
    std::set<std::string> directories;
    if (auto made = create_parents(files, batch, directories); !made) return made;
    auto appended = for_each_index(files.size(), [&](std::size_t i) -> Result<void> {
      const FileWrite& f = files[i];
      struct stat st;
      const bool is_new = ::stat(f.path.c_str(), &st) != 0;
      const int fd = ::open(f.path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd < 0) return io_error("cannot open for append", f.path, errno);
      auto written = write_all(fd, f.data, f.path);
      if (written && sync && !batch && ::fdatasync(fd) != 0)
        written = io_error("cannot sync", f.path, errno);
      ::close(fd);
      if (written && sync && is_new && !batch) written = sync_path(parent_dir(f.path));
      return written;
    });
    if (!appended) return appended;
    if (sync && batch) return sync_path(files.front().path, /*whole_file_system=*/true);
    return {};
  }

  // One write per path, in order of first appearance: the concatenated data (append) or the
  // last data (replace). Nothing when no path repeats (the usual batch: no copy).
  static std::optional<std::vector<FileWrite>> merge_by_path(const std::vector<FileWrite>& files,
                                                             bool append) {
    std::unordered_map<std::string_view, std::size_t> index;
    index.reserve(files.size());
    for (const FileWrite& f : files) index.try_emplace(f.path, index.size());
    if (index.size() == files.size()) return std::nullopt;
    std::vector<FileWrite> out(index.size());
    for (const FileWrite& f : files) {
      FileWrite& merged = out[index.at(f.path)];
      if (merged.path.empty()) merged.path = f.path;
      if (append)
        merged.data += f.data;
      else
        merged.data = f.data;
    }
    return out;
  }

  // The parent directories of `files`, created where missing (on this thread: two threads
  // creating the same parent would race); `directories` receives them.
  static Result<void> create_parents(const std::vector<FileWrite>& files, bool batch,
                                     std::set<std::string>& directories) {
    for (const FileWrite& f : files) {
      std::string dir = parent_dir(f.path);
      if (directories.count(dir)) continue;
      if (auto made = create_dirs(dir, /*sync=*/!batch); !made) return made;
      directories.insert(std::move(dir));
    }
    return {};
  }

  static Result<void> create_dirs(const std::string& path, bool sync) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return {};
    std::error_code ec;
    stdfs::create_directories(path, ec);
    if (ec) return fail(fmt::format("cannot create directory {}: {}", path, ec.message()));
    // A new directory entry is durable once its parent is synced.
    return sync ? sync_path(parent_dir(path)) : Result<void>{};
  }

  std::atomic<unsigned long> counter_{0};
};

class LocalResolver final : public FileSystemResolver {
 public:
  Result<std::shared_ptr<FileSystem>> resolve(std::string_view uri) override {
    if (uri.empty() || uri.rfind("file:", 0) == 0) return fs_;
    return fail(
        fmt::format("file system \"{}\" is not supported here (only file: URIs; "
                    "hdfs:// needs the Hadoop configuration)",
                    uri));
  }

 private:
  std::shared_ptr<FileSystem> fs_ = make_local_file_system();
};

}  // namespace

std::shared_ptr<FileSystem> make_local_file_system() { return std::make_shared<LocalFileSystem>(); }

std::unique_ptr<FileSystemResolver> make_local_file_system_resolver() {
  return std::make_unique<LocalResolver>();
}

}  // namespace celos
