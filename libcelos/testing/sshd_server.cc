#include "testing/sshd_server.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing/free_port.h"
#include "testing/temp_dir.h"

namespace celos::testing {
namespace {

constexpr const char* kSshd = "/usr/sbin/sshd";

// Runs a program to its end, its output into `log`; throws when it fails.
void run(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(
        fmt::format("sshd for tests: {} failed: {}", argv[0], read_text_file(log)));
  }
}

// The public half of a new unencrypted ed25519 key at `path`.
std::string keygen(const std::string& path, const std::string& log) {
  run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path}, log);
  std::string pub = read_text_file(path + ".pub");
  while (!pub.empty() && (pub.back() == '\n' || pub.back() == '\r')) pub.pop_back();
  return pub;
}

bool listens(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::unique_ptr<SshdServer> SshdServer::start(std::string& why_not) {
  if (!std::filesystem::exists(kSshd)) {
    why_not = std::string(kSshd) + " not found (install openssh-server: scripts/setup.sh)";
    return nullptr;
  }
  std::unique_ptr<SshdServer> server(new SshdServer());
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/celos-sshd-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  server->dir_ = tmpl;
  const passwd* pw = ::getpwuid(::geteuid());
  if (pw == nullptr) throw std::runtime_error("sshd for tests: who am I?");
  server->user_ = pw->pw_name;
  server->port_ = free_port();
  std::filesystem::create_directories(server->home() + "/.ssh");
  std::filesystem::create_directories(server->files());
  server->write_config();
  if (::geteuid() == 0) ::mkdir("/run/sshd", 0755);  // sshd's privilege separation directory
  const std::string log = server->dir_ + "/sshd.log";
  server->pid_ = ::fork();
  if (server->pid_ < 0) throw std::runtime_error("fork failed");
  if (server->pid_ == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    const std::string config = server->dir_ + "/sshd_config";
    ::execl(kSshd, kSshd, "-D", "-e", "-f", config.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 200; ++i) {  // bounded: 20 s
    if (::waitpid(server->pid_, nullptr, WNOHANG) == server->pid_) {
      server->pid_ = -1;
      throw std::runtime_error("sshd for tests exited: " + read_text_file(log));
    }
    if (listens(server->port_)) return server;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error(fmt::format("sshd for tests did not listen on port {}: {}",
                                       server->port_, read_text_file(log)));
}

void SshdServer::write_config() const {
  const std::string log = dir_ + "/keygen.log";
  const std::string host_key = keygen(dir_ + "/host_ed25519", log);
  const std::string client_key = keygen(home() + "/.ssh/id_ed25519", log);
  write_text_file(dir_ + "/authorized_keys", client_key + "\n");
  write_text_file(home() + "/.ssh/known_hosts",
                  fmt::format("[127.0.0.1]:{} {}\n", port_, host_key));
  write_text_file(dir_ + "/sshd_config",
                  fmt::format("Port {}\nListenAddress 127.0.0.1\nHostKey {}/host_ed25519\n"
                              "AuthorizedKeysFile {}/authorized_keys\nPidFile {}/sshd.pid\n"
                              "StrictModes no\nUsePAM no\nPermitRootLogin yes\n"
                              "PubkeyAuthentication yes\nPasswordAuthentication no\n"
                              "KbdInteractiveAuthentication no\n"
                              "Subsystem sftp internal-sftp\nLogLevel VERBOSE\n",
                              port_, dir_, dir_, dir_));
}

SshdServer::~SshdServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace celos::testing
