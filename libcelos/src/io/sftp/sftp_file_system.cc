// The SFTP FileSystem (libssh2, blocking mode with a session timeout).
//
// Why things are done the way they are:
// - OpenSSH speaks SFTP v3, whose rename refuses an existing target and ignores libssh2's
//   overwrite flags, and libssh2 1.10 has no posix-rename@openssh.com call. So a file is
//   replaced by: upload to a temporary name, rename the old file aside, rename the new one in,
//   delete the old one. Readers see the old or the new file, never a torn one; only for the
//   instant between the two renames is there no file at all.
// - known_hosts is read line by line: libssh2_knownhost_readfile() gives up at the first line
//   it cannot parse (certificates, markers, key types it does not know), which real files have.
// - The host key is matched with its key type, so an entry of another type for the same host
//   is "not found" rather than "changed" (OpenSSH behaves the same way).
#include <fcntl.h>
#include <fmt/format.h>
#include <libssh2.h>
#include <libssh2_sftp.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include "celos/mutex.h"
#include "celos/sftp.h"

namespace celos {

namespace {

std::string endpoint_name(const SftpEndpoint& endpoint) {
  return fmt::format("{}@{}:{}", endpoint.user, endpoint.host, endpoint.port);
}

std::string session_error(LIBSSH2_SESSION* session) {
  char* message = nullptr;
  int length = 0;
  libssh2_session_last_error(session, &message, &length, 0);
  return message != nullptr && length > 0 ? std::string(message, static_cast<std::size_t>(length))
                                          : "unknown error";
}

std::string base64(const unsigned char* data, std::size_t size) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < size; i += 3) {
    unsigned value = static_cast<unsigned>(data[i]) << 16;
    if (i + 1 < size) value |= static_cast<unsigned>(data[i + 1]) << 8;
    if (i + 2 < size) value |= data[i + 2];
    out += kAlphabet[(value >> 18) & 63];
    out += kAlphabet[(value >> 12) & 63];
    if (i + 1 < size) out += kAlphabet[(value >> 6) & 63];
    if (i + 2 < size) out += kAlphabet[value & 63];
  }
  return out;  // unpadded, as ssh-keygen prints SHA256 fingerprints
}

std::string random_name_part() {
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  return fmt::format("{:012x}", engine() & 0xffffffffffffULL);
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// ---- connection

Result<int> tcp_connect(const SftpEndpoint& endpoint, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  const std::string port = std::to_string(endpoint.port);
  if (int rc = ::getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &addresses); rc != 0) {
    return fail(fmt::format("cannot resolve {}: {}", endpoint.host, ::gai_strerror(rc)));
  }
  std::string last_error = "no address";
  for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = ::poll(&p, 1, static_cast<int>(timeout.count()));
      int error = rc == 0 ? ETIMEDOUT : 0;
      socklen_t length = sizeof error;
      if (rc > 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
      rc = error == 0 ? 0 : -1;
      errno = error;
    }
    if (rc == 0) {
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      ::freeaddrinfo(addresses);
      return fd;
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(addresses);
  return fail(fmt::format("cannot connect to {}:{}: {}", endpoint.host, endpoint.port, last_error));
}

struct KnownHostsDeleter {
  void operator()(LIBSSH2_KNOWNHOSTS* hosts) const { libssh2_knownhost_free(hosts); }
};

struct HostKey {
  const char* data = nullptr;
  std::size_t size = 0;
  int knownhost_type = LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
  std::string type_name;
};

// libssh2's host key type -> its known_hosts key type and the OpenSSH name.
struct HostKeyKind {
  int hostkey_type;
  int knownhost_type;
  const char* name;
};
constexpr HostKeyKind kHostKeyKinds[] = {
    {LIBSSH2_HOSTKEY_TYPE_RSA, LIBSSH2_KNOWNHOST_KEY_SSHRSA, "ssh-rsa"},
    {LIBSSH2_HOSTKEY_TYPE_DSS, LIBSSH2_KNOWNHOST_KEY_SSHDSS, "ssh-dss"},
    {LIBSSH2_HOSTKEY_TYPE_ECDSA_256, LIBSSH2_KNOWNHOST_KEY_ECDSA_256, "ecdsa-sha2-nistp256"},
    {LIBSSH2_HOSTKEY_TYPE_ECDSA_384, LIBSSH2_KNOWNHOST_KEY_ECDSA_384, "ecdsa-sha2-nistp384"},
    {LIBSSH2_HOSTKEY_TYPE_ECDSA_521, LIBSSH2_KNOWNHOST_KEY_ECDSA_521, "ecdsa-sha2-nistp521"},
    {LIBSSH2_HOSTKEY_TYPE_ED25519, LIBSSH2_KNOWNHOST_KEY_ED25519, "ssh-ed25519"},
};

HostKey host_key_of(LIBSSH2_SESSION* session) {
  HostKey key;
  int type = LIBSSH2_HOSTKEY_TYPE_UNKNOWN;
  key.data = libssh2_session_hostkey(session, &key.size, &type);
  key.type_name = "unknown";
  for (const HostKeyKind& kind : kHostKeyKinds) {
    if (kind.hostkey_type == type) {
      key.knownhost_type = kind.knownhost_type;
      key.type_name = kind.name;
    }
  }
  return key;
}

std::string fingerprint(LIBSSH2_SESSION* session) {
  const char* hash = libssh2_hostkey_hash(session, LIBSSH2_HOSTKEY_HASH_SHA256);
  if (hash == nullptr) return "(no fingerprint)";
  return "SHA256:" + base64(reinterpret_cast<const unsigned char*>(hash), 32);
}

Result<void> append_known_host(LIBSSH2_KNOWNHOSTS* hosts, const SftpEndpoint& endpoint,
                               const HostKey& key, const std::string& home,
                               const std::string& file) {
  const std::string name =
      endpoint.port == 22 ? endpoint.host : fmt::format("[{}]:{}", endpoint.host, endpoint.port);
  libssh2_knownhost* entry = nullptr;
  const int mask = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | key.knownhost_type;
  if (libssh2_knownhost_addc(hosts, name.c_str(), nullptr, key.data, key.size, nullptr, 0, mask,
                             &entry) != 0) {
    return fail("cannot add the host key of " + name);
  }
  char line[8192];
  std::size_t length = 0;
  if (libssh2_knownhost_writeline(hosts, entry, line, sizeof line, &length,
                                  LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0) {
    return fail("cannot format the host key of " + name);
  }
  ::mkdir((home + "/.ssh").c_str(), 0700);
  std::ofstream out(file, std::ios::app);
  out.write(line, static_cast<std::streamsize>(length));
  out.close();
  if (!out) return fail("cannot append to " + file);
  return {};
}

Result<void> check_host_key(LIBSSH2_SESSION* session, const SftpEndpoint& endpoint,
                            const SftpOptions& options) {
  const HostKey key = host_key_of(session);
  if (key.data == nullptr) return fail("the server at " + endpoint.host + " sent no host key");
  std::unique_ptr<LIBSSH2_KNOWNHOSTS, KnownHostsDeleter> hosts(libssh2_knownhost_init(session));
  if (!hosts) return fail("cannot initialise known hosts");
  const std::string file = options.home + "/.ssh/known_hosts";
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    libssh2_knownhost_readline(hosts.get(), line.data(), line.size(),
                               LIBSSH2_KNOWNHOST_FILE_OPENSSH);  // unparsable lines: skipped
  }
  libssh2_knownhost* found = nullptr;
  const int check = libssh2_knownhost_checkp(
      hosts.get(), endpoint.host.c_str(), endpoint.port, key.data, key.size,
      LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | key.knownhost_type, &found);
  const std::string where =
      endpoint.port == 22 ? endpoint.host : fmt::format("[{}]:{}", endpoint.host, endpoint.port);
  switch (check) {
    case LIBSSH2_KNOWNHOST_CHECK_MATCH:
      return {};
    case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
      return fail(fmt::format(
          "HOST KEY CHANGED for {}: the server's {} key {} differs from the one in {}; this may be "
          "an attack. If the change is expected, remove the old entry "
          "(ssh-keygen -R '{}' -f {}) and try again",
          where, key.type_name, fingerprint(session), file, where, file));
    case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
      if (options.accept_new_host_key)
        return append_known_host(hosts.get(), endpoint, key, options.home, file);
      return fail(fmt::format(
          "unknown host key for {}: {} {} is not in {}. Check the fingerprint and accept it with "
          "--accept-new-host-key (or ssh-keyscan -p {} {} >> {})",
          where, key.type_name, fingerprint(session), file, endpoint.port, endpoint.host, file));
    default:
      return fail("cannot check the host key of " + where);
  }
}

Result<void> authenticate(LIBSSH2_SESSION* session, const SftpEndpoint& endpoint,
                          const std::string& home) {
  const std::string& user = endpoint.user;
  const unsigned user_length = static_cast<unsigned>(user.size());
  const char* methods = libssh2_userauth_list(session, user.c_str(), user_length);
  if (methods == nullptr) {
    if (libssh2_userauth_authenticated(session)) return {};
    return fail(fmt::format("SSH authentication as {} failed: {}", endpoint_name(endpoint),
                            session_error(session)));
  }
  if (std::strstr(methods, "publickey") == nullptr) {
    return fail(
        fmt::format("SSH authentication as {} failed: the server accepts no public keys "
                    "(only {})",
                    endpoint_name(endpoint), methods));
  }
  std::vector<std::string> tried;
  if (const char* socket = std::getenv("SSH_AUTH_SOCK"); socket != nullptr && *socket != '\0') {
    LIBSSH2_AGENT* agent = libssh2_agent_init(session);
    bool ok = false;
    if (agent != nullptr && libssh2_agent_connect(agent) == 0 &&
        libssh2_agent_list_identities(agent) == 0) {
      libssh2_agent_publickey* identity = nullptr;
      libssh2_agent_publickey* previous = nullptr;
      while (!ok && libssh2_agent_get_identity(agent, &identity, previous) == 0) {
        ok = libssh2_agent_userauth(agent, user.c_str(), identity) == 0;
        previous = identity;
      }
      libssh2_agent_disconnect(agent);
      tried.push_back("ssh-agent");
    } else {
      tried.push_back("ssh-agent (unreachable)");
    }
    if (agent != nullptr) libssh2_agent_free(agent);
    if (ok) return {};
  }
  for (const char* name : {"id_ed25519", "id_ecdsa", "id_rsa"}) {
    const std::string key = home + "/.ssh/" + name;
    if (::access(key.c_str(), R_OK) != 0) continue;
    const std::string pub = key + ".pub";
    const bool has_pub = ::access(pub.c_str(), R_OK) == 0;
    if (libssh2_userauth_publickey_fromfile_ex(session, user.c_str(), user_length,
                                               has_pub ? pub.c_str() : nullptr, key.c_str(),
                                               "") == 0) {
      return {};
    }
    tried.push_back(fmt::format("{} ({})", key, session_error(session)));
  }
  if (tried.empty())
    tried.push_back(fmt::format("nothing: no ssh-agent and no key in {}/.ssh", home));
  std::string list;
  for (const std::string& t : tried) list += (list.empty() ? "" : ", ") + t;
  return fail(
      fmt::format("SSH authentication as {} failed; tried {}", endpoint_name(endpoint), list));
}

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
    const std::string dir = parent_of(path);
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

// Owns a half-built connection until the file system takes it over.
struct PendingConnection {
  int socket = -1;
  LIBSSH2_SESSION* session = nullptr;
  ~PendingConnection() {
    if (session != nullptr) {
      libssh2_session_disconnect(session, "bye");
      libssh2_session_free(session);
    }
    if (socket >= 0) ::close(socket);
  }
};

}  // namespace

Result<std::shared_ptr<FileSystem>> connect_sftp_file_system(const SftpEndpoint& endpoint,
                                                             const SftpOptions& options) {
  static const int init = libssh2_init(0);
  if (init != 0) return fail("cannot initialise libssh2");
  PendingConnection pending;
  auto socket = tcp_connect(endpoint, options.timeout);
  if (!socket) return tl::unexpected(socket.error());
  pending.socket = *socket;
  pending.session = libssh2_session_init();
  if (pending.session == nullptr) return fail("cannot create an SSH session");
  libssh2_session_set_blocking(pending.session, 1);
  libssh2_session_set_timeout(pending.session, static_cast<long>(options.timeout.count()));
  // OpenSSH's order: its known_hosts entries are mostly ed25519, and libssh2 1.10 would pick
  // ECDSA first and then find no entry for a host the user has long trusted.
  libssh2_session_method_pref(pending.session, LIBSSH2_METHOD_HOSTKEY,
                              "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,"
                              "ecdsa-sha2-nistp521,ssh-rsa");
  if (libssh2_session_handshake(pending.session, pending.socket) != 0) {
    return fail(fmt::format("SSH handshake with {}:{} failed: {}", endpoint.host, endpoint.port,
                            session_error(pending.session)));
  }
  if (auto ok = check_host_key(pending.session, endpoint, options); !ok) {
    return tl::unexpected(ok.error());
  }
  if (auto ok = authenticate(pending.session, endpoint, options.home); !ok) {
    return tl::unexpected(ok.error());
  }
  LIBSSH2_SFTP* sftp = libssh2_sftp_init(pending.session);
  if (sftp == nullptr) {
    return fail(fmt::format("cannot start SFTP on {}: {}", endpoint_name(endpoint),
                            session_error(pending.session)));
  }
  auto fs = std::make_shared<SftpFileSystem>(endpoint, pending.socket, pending.session, sftp);
  pending.socket = -1;
  pending.session = nullptr;
  return std::shared_ptr<FileSystem>(std::move(fs));
}

}  // namespace celos
