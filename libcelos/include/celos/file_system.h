// File systems: the local disk, WebHDFS, SFTP and, in tests, memory (libcelos/testing). Adding a
// virtual? Forward it in FileSystemWrapper (file_system_wrapper.h, model/wrapper_test.cc).
// Used by hdfsCheckTrigger (exists, or list where prefers_listing()), by the file state database
// (everything) and by the deploy tool (everything). Paths are absolute, `/`-separated. Failures of
// the outside world are values. Implementations are safe to call from several threads unless they
// say otherwise.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "celos/error.h"

namespace celos {

struct FileStatus {
  std::string name;  // the last path component
  bool is_directory = false;
  std::uint64_t size = 0;
  // Last modification, nanoseconds since the epoch (0 if the file system cannot tell). A
  // directory's changes when entries are added, removed or renamed in it.
  std::int64_t mtime_ns = 0;
};

struct FileWrite {
  std::string path;
  std::string data;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // True if a file or directory exists at `path`; false if not; an error if the file system
  // could not answer (HDFS down), which is not the same as "does not exist".
  [[nodiscard]] virtual Result<bool> exists(const std::string& path) = 0;

  // The whole content of a file. ErrorCode::kNotFound if there is none.
  [[nodiscard]] virtual Result<std::string> read(const std::string& path) = 0;

  // Writes each file, creating parent directories and replacing what was there. Each file is
  // replaced atomically where the file system allows it (local: temp file + rename, so a reader
  // or a crash sees the old or the new content, never a torn file), and all of them are durable
  // when this returns. Writes are grouped so that durability costs one sync for the whole batch
  // rather than one per file. On failure, files already written are whole; the rest untouched.
  [[nodiscard]] virtual Result<void> write_files(const std::vector<FileWrite>& files) = 0;

  // mkdir -p.
  [[nodiscard]] virtual Result<void> make_dirs(const std::string& path) = 0;

  // Removes a file or a directory tree. Not an error if nothing is there.
  [[nodiscard]] virtual Result<void> remove(const std::string& path) = 0;

  // Renames `from` to `to`; `to` must not exist (or be an empty directory / a file on the local
  // file system, where rename(2) replaces it).
  [[nodiscard]] virtual Result<void> rename(const std::string& from, const std::string& to) = 0;

  // The entries of a directory, sorted by name. ErrorCode::kNotFound if it does not exist.
  [[nodiscard]] virtual Result<std::vector<FileStatus>> list(const std::string& directory) = 0;

  // list() for a reader that needs only the names and which of them are directories: sizes
  // and mtimes may be 0. The local file system reads the directory alone, without a stat(2)
  // of each entry (a day of minutely announcements: 1,440 of them). The default is list().
  [[nodiscard]] virtual Result<std::vector<FileStatus>> list_names(const std::string& directory) {
    return list(directory);
  }

  // True when one list() of a directory costs about as much as one exists() (a round trip to a
  // remote server: WebHDFS, SFTP), so that a step answers the paths waiting in one directory
  // with one listing of it (issue 28). False, the default, where exists() is cheaper than
  // reading a directory (the local disk). Either way exists() and list() must agree: a path
  // exists exactly when its name is in its parent's listing, and listing a directory that does
  // not exist is ErrorCode::kNotFound (the FileSystem contract checks both).
  virtual bool prefers_listing() const { return false; }

  // The status of one file or directory; ErrorCode::kNotFound if there is none. The default
  // lists the parent directory; the local file system asks stat(2).
  [[nodiscard]] virtual Result<FileStatus> file_status(const std::string& path) {
    const std::size_t slash = path.find_last_of('/');
    const std::string parent = slash == std::string::npos ? "." : path.substr(0, slash);
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    auto entries = list(parent.empty() ? "/" : parent);
    if (!entries) return tl::unexpected(entries.error());
    for (FileStatus& e : *entries) {
      if (e.name == name) return std::move(e);
    }
    return fail("no such file or directory: " + path, ErrorCode::kNotFound);
  }

  // Appends each `data` to its file (created, with its parent directories, if missing); all of
  // them durable when this returns. Not atomic: a crash may leave a torn last line, which
  // readers of append-only files must tolerate. The default reads each file once and rewrites
  // it with all of its appends in the batch's order (write_files); the local file system appends
  // in place (O_APPEND), with one sync per batch.
  [[nodiscard]] virtual Result<void> append_files(const std::vector<FileWrite>& files) {
    std::vector<FileWrite> whole;
    std::map<std::string, std::size_t> index;  // path -> its entry in `whole`
    for (const FileWrite& f : files) {
      auto [at, added] = index.emplace(f.path, whole.size());
      if (!added) {
        whole[at->second].data += f.data;
        continue;
      }
      auto old = read(f.path);
      if (!old && old.error().code != ErrorCode::kNotFound) return tl::unexpected(old.error());
      whole.push_back({f.path, (old ? *old : std::string()) + f.data});
    }
    return write_files(whole);
  }

  // write_files, with `before_visible` run once the new contents are durable and before any of
  // them replaces its path: what must be durable no later than the new files (an OpenLineage
  // event before the slot state it describes). Its error stops the write, nothing replaced. The
  // default runs it first; the local file system runs it after the files' sync, which for a
  // large batch is a sync of the whole file system: that makes whatever was written to it before
  // durable too, so that a sync of such data (sync_files) then finds nothing left to do.
  [[nodiscard]] virtual Result<void> write_files_after(
      const std::vector<FileWrite>& files, const std::function<Result<void>()>& before_visible) {
    if (auto first = before_visible(); !first) return first;
    return write_files(files);
  }

  // append_files without waiting for durability: sync_files() of the paths makes the appends
  // (and new files' names) durable later, so that one sync covers several appends, or rides on a
  // sync the file system does anyway (write_files_after). Not durable until then: a crash may
  // lose them. The default appends durably (and sync_files has nothing left to do).
  [[nodiscard]] virtual Result<void> append_files_unsynced(const std::vector<FileWrite>& files) {
    return append_files(files);
  }
  [[nodiscard]] virtual Result<void> sync_files(const std::vector<std::string>& paths) {
    (void)paths;
    return {};
  }

  // One file: write_files({{path, data}}).
  [[nodiscard]] Result<void> write(const std::string& path, std::string data) {
    return write_files({FileWrite{path, std::move(data)}});
  }
};

// The local file system. Paths are used as given (absolute).
std::shared_ptr<FileSystem> make_local_file_system();

// Turns the file system URI of an hdfsCheckTrigger (`file:///`, `hdfs://nn:8020`,
// `hdfs://nameservice1`, `webhdfs://host:port`, or empty = the default file system) into a
// file system. Implementations cache what they build.
class FileSystemResolver {
 public:
  virtual ~FileSystemResolver() = default;
  [[nodiscard]] virtual Result<std::shared_ptr<FileSystem>> resolve(std::string_view uri) = 0;
};

// A resolver that knows `file:` URIs only (and maps the empty URI to the local file system).
// The Hadoop-aware resolver (WebHDFS) is in celos/hadoop.h.
std::unique_ptr<FileSystemResolver> make_local_file_system_resolver();

}  // namespace celos
