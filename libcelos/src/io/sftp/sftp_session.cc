// The SSH connection under the SFTP FileSystem (sftp_session.h).
//
// Why things are done the way they are:
// - known_hosts is read line by line: libssh2_knownhost_readfile() gives up at the first line
//   it cannot parse (certificates, markers, key types it does not know), which real files have.
// - The host key is matched with its key type, so an entry of another type for the same host
//   is "not found" rather than "changed" (OpenSSH behaves the same way).
#include "io/sftp/sftp_session.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace celos {

namespace {

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

Result<SftpConnection> open_sftp_connection(const SftpEndpoint& endpoint,
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
  SftpConnection connection{pending.socket, pending.session, sftp};
  pending.socket = -1;
  pending.session = nullptr;
  return connection;
}

}  // namespace celos
