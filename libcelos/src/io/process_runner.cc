// The real ProcessRunner (celos/process_runner.h): posix_spawnp with three pipes and one poll()
// loop, so that a program writing much output while celos still feeds its input never blocks
// either side. The program gets its own process group, so a timeout kills what it started too.
#include "celos/process_runner.h"

#include <cerrno>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace celos {
namespace {

// The real clock on purpose (not celos::Clock): the timeouts bound poll() and waitpid() of a
// real child process.
using RealClock = std::chrono::steady_clock;

struct Pipe {
  int read = -1;
  int write = -1;
};

class Fds {
 public:
  ~Fds() {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  Result<Pipe> make_pipe() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return fail(fmt::format("pipe: {}", std::strerror(errno)));
    fds_.push_back(p[0]);
    fds_.push_back(p[1]);
    return Pipe{p[0], p[1]};
  }
  // The program's standard input: a socket pair, so that writing to a program that exited
  // without reading is EPIPE (send with MSG_NOSIGNAL), not a SIGPIPE that kills the server.
  Result<Pipe> make_input() {
    int p[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0) {
      return fail(fmt::format("socketpair: {}", std::strerror(errno)));
    }
    ::shutdown(p[0], SHUT_WR);
    ::shutdown(p[1], SHUT_RD);
    fds_.push_back(p[0]);
    fds_.push_back(p[1]);
    return Pipe{p[0], p[1]};
  }
  void close(int& fd) {
    for (int& mine : fds_) {
      if (mine == fd) mine = -1;
    }
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

 private:
  std::vector<int> fds_;
};

std::vector<std::string> environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals != std::string_view::npos && extra.contains(std::string(text.substr(0, equals)))) {
      continue;
    }
    env.emplace_back(text);
  }
  for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Waits for the child (already signalled or ended), returning its status.
int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

void kill_group(pid_t pid) {
  ::kill(-pid, SIGTERM);
  for (int i = 0; i < 50; ++i) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      ::kill(-pid, SIGKILL);  // anything the program left behind in its group
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid, SIGKILL);
  reap(pid);
}

class PosixProcessRunner : public ProcessRunner {
 public:
  explicit PosixProcessRunner(std::size_t max_output) : max_output_(max_output) {}

  Result<ProcessOutput> run(const ProcessRequest& request) override {
    if (request.argv.empty() || request.argv[0].empty()) return fail("no program to run");
    const std::string what = describe_command(request.argv);
    Fds fds;
    auto in = fds.make_input();
    auto out = fds.make_pipe();
    auto err = fds.make_pipe();
    if (!in || !out || !err) return fail(fmt::format("cannot run {}: no pipes", what));

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in->read, 0);
    posix_spawn_file_actions_adddup2(&actions, out->write, 1);
    posix_spawn_file_actions_adddup2(&actions, err->write, 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setpgroup(&attributes, 0);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);

    std::vector<std::string> args = request.argv;
    std::vector<std::string> env = environment(request.env);
    auto argv = pointers(args);
    auto envp = pointers(env);
    pid_t pid = 0;
    const int rc = ::posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (rc != 0) return fail(fmt::format("cannot run {}: {}", what, std::strerror(rc)));
    fds.close(in->read);
    fds.close(out->write);
    fds.close(err->write);
    return communicate(pid, fds, *in, *out, *err, request, what);
  }

 private:
  Result<ProcessOutput> communicate(pid_t pid, Fds& fds, Pipe& in, Pipe& out, Pipe& err,
                                    const ProcessRequest& request, const std::string& what) {
    ::fcntl(in.write, F_SETFL, O_NONBLOCK);
    ProcessOutput result;
    std::size_t written = 0;
    if (request.input.empty()) fds.close(in.write);
    const auto deadline = RealClock::now() + request.timeout;
    while (out.read >= 0 || err.read >= 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - RealClock::now());
      if (left.count() <= 0) {
        kill_group(pid);
        return fail(fmt::format("{} did not answer within {} s", what,
                                static_cast<double>(request.timeout.count()) / 1000.0));
      }
      pollfd polls[3] = {{out.read, POLLIN, 0}, {err.read, POLLIN, 0}, {in.write, POLLOUT, 0}};
      const int ready = ::poll(polls, 3, static_cast<int>(std::min<long long>(left.count(), 1000)));
      if (ready < 0 && errno != EINTR) {
        kill_group(pid);
        return fail(fmt::format("cannot run {}: poll: {}", what, std::strerror(errno)));
      }
      if (ready <= 0) continue;
      drain(polls[0], out.read, result.out, fds);
      drain(polls[1], err.read, result.err, fds);
      if (polls[2].revents != 0) feed(in.write, request.input, written, fds);
    }
    fds.close(in.write);
    result.exit_code = wait_until(pid, deadline);
    if (result.exit_code == -2) {
      return fail(fmt::format("{} did not answer within {} s", what,
                              static_cast<double>(request.timeout.count()) / 1000.0));
    }
    return result;
  }

  void drain(const pollfd& poll, int& fd, std::string& into, Fds& fds) const {
    if (poll.revents == 0) return;
    char buffer[65536];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
      fds.close(fd);
      return;
    }
    const std::size_t room = into.size() < max_output_ ? max_output_ - into.size() : 0;
    into.append(buffer, std::min(room, static_cast<std::size_t>(n)));
  }

  static void feed(int& fd, const std::string& input, std::size_t& written, Fds& fds) {
    const ssize_t n =
        ::send(fd, input.data() + written, input.size() - written, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n < 0) {  // the program does not read its input: not our problem
      fds.close(fd);
      return;
    }
    written += static_cast<std::size_t>(n);
    if (written == input.size()) fds.close(fd);
  }

  // The exit status, or -2 when the program (which closed its outputs) outlives the deadline.
  static int wait_until(pid_t pid, RealClock::time_point deadline) {
    for (;;) {
      int status = 0;
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) {
        if (WIFEXITED(status)) return WEXITSTATUS(status);
        if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
        return -1;
      }
      if (done < 0 && errno != EINTR) return -1;
      if (RealClock::now() > deadline) {
        kill_group(pid);
        return -2;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  std::size_t max_output_;
};

bool plain_word(const std::string& arg) {
  if (arg.empty()) return false;
  for (char c : arg) {
    const bool ok =
        std::isalnum(static_cast<unsigned char>(c)) != 0 || std::strchr("-_=.,/:@%+", c) != nullptr;
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string describe_command(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& arg : argv) {
    if (!line.empty()) line += ' ';
    if (plain_word(arg)) {
      line += arg;
      continue;
    }
    line += '\'';
    for (char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

ProcessRunnerPtr make_process_runner(std::size_t max_output_bytes) {
  return std::make_shared<PosixProcessRunner>(max_output_bytes);
}

}  // namespace celos
