// The SSH connection under the SFTP FileSystem (sftp_session.cc): TCP with a timeout, the
// host key checked against ~/.ssh/known_hosts, public key authentication (agent, then key
// files), SFTP started. Internal to io/sftp/.
#pragma once

#include <string>

#include <libssh2.h>
#include <libssh2_sftp.h>

#include "celos/error.h"
#include "celos/sftp.h"

namespace celos {

// An open connection; whoever receives it owns (and closes) all three.
struct SftpConnection {
  int socket = -1;
  LIBSSH2_SESSION* session = nullptr;
  LIBSSH2_SFTP* sftp = nullptr;
};

// Errors name the host (and for host keys the known_hosts file and what to do).
[[nodiscard]] Result<SftpConnection> open_sftp_connection(const SftpEndpoint& endpoint,
                                                          const SftpOptions& options);

// "user@host:port", for messages.
std::string endpoint_name(const SftpEndpoint& endpoint);

// libssh2's text of the session's last error.
std::string session_error(LIBSSH2_SESSION* session);

}  // namespace celos
