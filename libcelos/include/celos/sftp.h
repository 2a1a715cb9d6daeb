// A FileSystem over SFTP (libssh2), used by celos-ci to put workflow files on the Celos host.
//
// Authentication: keys from ssh-agent (when SSH_AUTH_SOCK is set), then `<home>/.ssh/id_ed25519`,
// `id_ecdsa`, `id_rsa` (unencrypted). The server's host key is checked against
// `<home>/.ssh/known_hosts` (plain and hashed entries, `[host]:port` for ports other than 22):
// an unknown key is an error that says how to accept it, unless `accept_new_host_key`, which
// appends it to known_hosts; a changed key is always an error.
//
// write_files() uploads each file to a temporary name beside it and renames it over the old one
// (the old file is renamed aside first because SFTP v3 servers refuse to rename onto an
// existing file); rename() requires that `to` does not exist. Calls are serialised by a mutex:
// one SSH session carries one request at a time.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "celos/error.h"
#include "celos/file_system.h"

namespace celos {

struct SftpEndpoint {
  std::string user;
  std::string host;
  int port = 22;
};

struct SftpOptions {
  std::string home;  // where `.ssh/` is
  bool accept_new_host_key = false;
  std::chrono::milliseconds timeout{30000};  // connect and each request
};

// Connects, checks the host key and authenticates. Errors name the endpoint and say what
// failed: connection refused, unknown or changed host key, authentication (with the keys
// tried).
[[nodiscard]] Result<std::shared_ptr<FileSystem>> connect_sftp_file_system(
    const SftpEndpoint& endpoint, const SftpOptions& options);

}  // namespace celos
