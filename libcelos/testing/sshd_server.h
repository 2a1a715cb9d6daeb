// A private sshd for tests (as test/ci/test_ci.py starts one): OpenSSH's sshd on 127.0.0.1 on a
// free port, this user, its host key, a client key and known_hosts in a temporary directory, the
// internal SFTP server. Stopped and removed when the object dies.
#pragma once

#include <memory>
#include <string>

#include <sys/types.h>

namespace celos::testing {

class SshdServer {
 public:
  // Starts sshd, or returns nullptr and sets `why_not` when it is not installed. Throws
  // std::runtime_error when it is installed but does not start.
  static std::unique_ptr<SshdServer> start(std::string& why_not);
  ~SshdServer();
  SshdServer(const SshdServer&) = delete;
  SshdServer& operator=(const SshdServer&) = delete;

  int port() const { return port_; }
  const std::string& user() const { return user_; }
  // A home whose .ssh/ has the client key (id_ed25519) and the server in known_hosts.
  std::string home() const { return dir_ + "/home"; }
  // A directory for the test's files (exists, empty).
  std::string files() const { return dir_ + "/files"; }

 private:
  SshdServer() = default;
  void write_config() const;

  std::string dir_, user_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace celos::testing
