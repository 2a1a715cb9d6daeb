// The SFTP FileSystem (libssh2, blocking mode with a session timeout); the connection it runs
// on is opened by sftp_session.cc.
//
// Why things are done the way they are:
// - OpenSSH speaks SFTP v3, whose rename refuses an existing target and ignores libssh2's
//   overwrite flags, and libssh2 1.10 has no posix-rename@openssh.com call. So a file is
//   replaced by: upload to a temporary name, rename the old file aside, rename the new one in,
//   delete the old one. Readers see the old or the new file, never a torn one; only for the
//   instant between the two renames is there no file at all.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include <fcntl.h>
#include <fmt/format.h>
#include <libssh2.h>
#include <libssh2_sftp.h>
#include <sys/stat.h>
#include <unistd.h>

#include "celos/mutex.h"
#include "celos/sftp.h"
#include "io/sftp/sftp_session.h"

namespace celos {

namespace {

std::string random_name_part() {
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  return fmt::format("{:012x}", engine() & 0xffffffffffffULL);
}

std::string remote_parent(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// ---- the file system

class SftpFileSystem : public FileSystem {
 public:
  SftpFileSystem(SftpEndpoint endpoint, int socket, LIBSSH2_SESSION* session, LIBSSH2_SFTP* sftp)
      : endpoint_(std::move(endpoint)), socket_(socket), session_(session), sftp_(sftp) {}
  ~SftpFileSystem() override {
    if (sftp_ != nullptr) libssh2_sftp_shutdown(sftp_);
    libssh2_session_disconnect(session_, "bye");
    libssh2_session_free(session_);
    ::close(socket_);
  }
  SftpFileSystem(const SftpFileSystem&) = delete;
  SftpFileSystem& operator=(const SftpFileSystem&) = delete;

  Result<bool> exists(const std::string& path) override {
    MutexLock lock(mutex_);
    auto attrs = stat(path);
    if (attrs) return true;
    if (attrs.error().code == ErrorCode::kNotFound) return false;
    return tl::unexpected(attrs.error());
  }

  Result<std::string> read(const std::string& path) override {
    MutexLock lock(mutex_);
    LIBSSH2_SFTP_HANDLE* handle = libssh2_sftp_open(sftp_, path.c_str(), LIBSSH2_FXF_READ, 0);
    if (handle == nullptr) return error("open", path);
    std::string data;
    char buffer[32768];
    for (;;) {
      const ssize_t n = libssh2_sftp_read(handle, buffer, sizeof buffer);
      if (n == 0) break;
      if (n < 0) {
        auto e = error("read", path);
        libssh2_sftp_close(handle);
        return e;
      }
      data.append(buffer, static_cast<std::size_t>(n));
    }
    libssh2_sftp_close(handle);
    return data;
  }

  Result<void> write_files(const std::vector<FileWrite>& files) override {
    MutexLock lock(mutex_);
    for (const FileWrite& file : files) {
      if (auto ok = write_one(file.path, file.data); !ok) return ok;
    }
    return {};
  }

  Result<void> make_dirs(const std::string& path) override {
    MutexLock lock(mutex_);
    return make_dirs_locked(path);
  }

  Result<void> remove(const std::string& path) override {
    MutexLock lock(mutex_);
    return remove_locked(path);
  }

  Result<void> rename(const std::string& from, const std::string& to) override {
    MutexLock lock(mutex_);
    return rename_locked(from, to);
  }

  Result<std::vector<FileStatus>> list(const std::string& directory) override {
    MutexLock lock(mutex_);
    return list_locked(directory);
  }

  // Every call is a round trip on the one session: a directory's waiting paths go in one listing.
  bool prefers_listing() const override { return true; }

 private:
  // The error of the last call, with kNotFound for "no such file".
  tl::unexpected<Error> error(std::string_view what, const std::string& path) REQUIRES(mutex_) {
    const std::string where = fmt::format("sftp://{}:{}{}", endpoint_.host, endpoint_.port, path);
    if (libssh2_session_last_errno(session_) == LIBSSH2_ERROR_SFTP_PROTOCOL) {
      switch (libssh2_sftp_last_error(sftp_)) {
        case LIBSSH2_FX_NO_SUCH_FILE:
        case LIBSSH2_FX_NO_SUCH_PATH:
          return fail(fmt::format("{} {}: no such file or directory", what, where),
                      ErrorCode::kNotFound);
        case LIBSSH2_FX_PERMISSION_DENIED:
          return fail(fmt::format("{} {}: permission denied", what, where));
        case LIBSSH2_FX_FILE_ALREADY_EXISTS:
          return fail(fmt::format("{} {}: already exists", what, where));
        case LIBSSH2_FX_NOT_A_DIRECTORY:
          return fail(fmt::format("{} {}: not a directory", what, where));
        case LIBSSH2_FX_FAILURE:  // what OpenSSH answers for most errno values
          return fail(
              fmt::format("{} {}: failed (a directory where a file is expected, or the "
                          "reverse?)",
                          what, where));
        default:
          return fail(
              fmt::format("{} {}: SFTP status {}", what, where, libssh2_sftp_last_error(sftp_)));
      }
    }
    return fail(fmt::format("{} {}: {}", what, where, session_error(session_)));
  }

  Result<LIBSSH2_SFTP_ATTRIBUTES> stat(const std::string& path, int how = LIBSSH2_SFTP_STAT)
      REQUIRES(mutex_) {
    LIBSSH2_SFTP_ATTRIBUTES attrs{};
    if (libssh2_sftp_stat_ex(sftp_, path.c_str(), static_cast<unsigned>(path.size()), how,
                             &attrs) != 0) {
      return error("stat", path);
    }
    return attrs;
  }

  static bool is_directory(const LIBSSH2_SFTP_ATTRIBUTES& attrs) {
    return (attrs.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) != 0 &&
           LIBSSH2_SFTP_S_ISDIR(attrs.permissions);
  }

  Result<void> upload(const std::string& path, const std::string& data) REQUIRES(mutex_) {
    LIBSSH2_SFTP_HANDLE* handle = libssh2_sftp_open(
        sftp_, path.c_str(), LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC, 0644);
    if (handle == nullptr) return error("create", path);
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = libssh2_sftp_write(handle, data.data() + done, data.size() - done);
      if (n <= 0) {
        auto e = error("write", path);
        libssh2_sftp_close(handle);
        libssh2_sftp_unlink(sftp_, path.c_str());
        return e;
      }
      done += static_cast<std::size_t>(n);
    }
    libssh2_sftp_fsync(handle);  // fsync@openssh.com; servers without it keep the data anyway
    if (libssh2_sftp_close(handle) != 0) {
      auto e = error("close", path);
      libssh2_sftp_unlink(sftp_, path.c_str());
      return e;
    }
    return {};
  }

  Result<void> write_one(const std::string& path, const std::string& data) REQUIRES(mutex_) {
    const std::string dir = remote_parent(path);
    if (auto ok = make_dirs_locked(dir); !ok) return ok;
    const std::string prefix = (dir == "/" ? "" : dir) + "/." + base_name(path);
    const std::string tmp = prefix + ".celos-tmp-" + random_name_part();
    if (auto ok = upload(tmp, data); !ok) return ok;
    auto old = stat(path);
    if (!old && old.error().code != ErrorCode::kNotFound) {
      libssh2_sftp_unlink(sftp_, tmp.c_str());
      return tl::unexpected(old.error());
    }
    if (!old) {
      auto ok = rename_locked(tmp, path);
      if (!ok) libssh2_sftp_unlink(sftp_, tmp.c_str());
      return ok;
    }
    if (is_directory(*old)) {  // as rename(2) would: a file never replaces a directory
      libssh2_sftp_unlink(sftp_, tmp.c_str());
      return fail(fmt::format("write sftp://{}:{}{}: is a directory", endpoint_.host,
                              endpoint_.port, path));
    }
    const std::string aside = prefix + ".celos-old-" + random_name_part();
    if (auto ok = rename_locked(path, aside); !ok) {
      libssh2_sftp_unlink(sftp_, tmp.c_str());
      return ok;
    }
    if (auto ok = rename_locked(tmp, path); !ok) {
      (void)rename_locked(aside, path);
      libssh2_sftp_unlink(sftp_, tmp.c_str());
      return ok;
    }
    (void)remove_locked(aside);
    return {};
  }

  Result<void> make_dirs_locked(const std::string& path) REQUIRES(mutex_) {
    std::string so_far;
    std::size_t start = 1;
    while (start <= path.size()) {
      const std::size_t slash = std::min(path.find('/', start), path.size());
      if (slash > start) {
        so_far += "/" + path.substr(start, slash - start);
        auto attrs = stat(so_far);
        if (attrs && !is_directory(*attrs)) {
          return fail(fmt::format("mkdir sftp://{}:{}{}: a file is in the way", endpoint_.host,
                                  endpoint_.port, so_far));
        }
        if (!attrs && attrs.error().code != ErrorCode::kNotFound)
          return tl::unexpected(attrs.error());
        if (!attrs && libssh2_sftp_mkdir(sftp_, so_far.c_str(), 0755) != 0) {
          auto e = error("mkdir", so_far);
          if (!stat(so_far)) return e;  // unless someone else made it meanwhile
        }
      }
      start = slash + 1;
    }
    return {};
  }

  Result<void> remove_locked(const std::string& path) REQUIRES(mutex_) {
    auto attrs = stat(path, LIBSSH2_SFTP_LSTAT);
    if (!attrs) {
      if (attrs.error().code == ErrorCode::kNotFound) return {};
      return tl::unexpected(attrs.error());
    }
    if (!is_directory(*attrs)) {
      if (libssh2_sftp_unlink(sftp_, path.c_str()) != 0) return error("remove", path);
      return {};
    }
    auto entries = list_locked(path);
    if (!entries) return tl::unexpected(entries.error());
    for (const FileStatus& entry : *entries) {
      if (auto ok = remove_locked((path == "/" ? "" : path) + "/" + entry.name); !ok) return ok;
    }
    if (libssh2_sftp_rmdir(sftp_, path.c_str()) != 0) return error("rmdir", path);
    return {};
  }

  Result<void> rename_locked(const std::string& from, const std::string& to) REQUIRES(mutex_) {
    const long flags = LIBSSH2_SFTP_RENAME_ATOMIC | LIBSSH2_SFTP_RENAME_NATIVE;
    if (libssh2_sftp_rename_ex(sftp_, from.c_str(), static_cast<unsigned>(from.size()), to.c_str(),
                               static_cast<unsigned>(to.size()), flags) != 0) {
      auto e = error("rename", from);
      return fail(e.value().message + " -> " + to, e.value().code);
    }
    return {};
  }

  Result<std::vector<FileStatus>> list_locked(const std::string& directory) REQUIRES(mutex_) {
    LIBSSH2_SFTP_HANDLE* handle = libssh2_sftp_opendir(sftp_, directory.c_str());
    if (handle == nullptr) return error("list", directory);
    std::vector<FileStatus> out;
    char name[1024];
    for (;;) {
      LIBSSH2_SFTP_ATTRIBUTES attrs{};
      const int n = libssh2_sftp_readdir(handle, name, sizeof name, &attrs);
      if (n == 0) break;
      if (n < 0) {
        auto e = error("list", directory);
        libssh2_sftp_closedir(handle);
        return e;
      }
      std::string entry(name, static_cast<std::size_t>(n));
      if (entry == "." || entry == "..") continue;
      out.push_back({entry, is_directory(attrs), attrs.filesize});
    }
    libssh2_sftp_closedir(handle);
    std::sort(out.begin(), out.end(),
              [](const FileStatus& a, const FileStatus& b) { return a.name < b.name; });
    return out;
  }

  SftpEndpoint endpoint_;
  int socket_;
  LIBSSH2_SESSION* session_;
  LIBSSH2_SFTP* sftp_;
  Mutex mutex_;  // one request at a time on the session
};

}  // namespace

Result<std::shared_ptr<FileSystem>> connect_sftp_file_system(const SftpEndpoint& endpoint,
                                                             const SftpOptions& options) {
  auto connection = open_sftp_connection(endpoint, options);
  if (!connection) return tl::unexpected(connection.error());
  return std::shared_ptr<FileSystem>(std::make_shared<SftpFileSystem>(
      endpoint, connection->socket, connection->session, connection->sftp));
}

}  // namespace celos
