#include "io/command/job_launch.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace celos::command_job {
namespace {

// The launcher, run by the spawned /bin/sh: its arguments ("$@") are the job's /bin/sh arguments.
// fd 3 is the report pipe, closed for the job. Reports "P <pid>" or "E <why>".
constexpr const char* kLauncher =
    "command -v setsid >/dev/null 2>&1 || { echo 'E setsid (util-linux) not found' >&3; "
    "exit 0; }\n"
    "setsid /bin/sh \"$@\" 3>&- &\n"
    "echo \"P $!\" >&3\n";

std::string launch_errno_text(int error) { return std::strerror(error); }

// Closes the descriptors it holds when it goes.
struct LaunchFds {
  int fd[5] = {-1, -1, -1, -1, -1};  // null, out, err, report read, report write
  ~LaunchFds() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
};

// A directory the job can enter, or why not (checked before spawning, so that the error names
// the directory and errno as chdir would).
int enterable(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return errno;
  if (!S_ISDIR(st.st_mode)) return ENOTDIR;
  return ::access(dir.c_str(), X_OK) == 0 ? 0 : errno;
}

// The spawned shell's pid, or the errno of posix_spawn.
int spawn(const Launch& job, const LaunchFds& fds, pid_t& pid) {
  std::vector<std::string> args = {"sh", "-c", kLauncher, "celos-launch"};
  args.insert(args.end(), job.args.begin(), job.args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = job.env;
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, fds.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds.fd[2], 2);
  posix_spawn_file_actions_adddup2(&actions, fds.fd[4], 3);
  // The job must not inherit the server's sockets (a listening socket would outlive it).
  posix_spawn_file_actions_addclosefrom_np(&actions, 4);
  posix_spawn_file_actions_addchdir_np(&actions, job.cwd.c_str());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  const int rc = ::posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  return rc;
}

// What the launcher wrote to the pipe (until it closed it by exiting).
std::string read_report(int fd) {
  std::string text;
  char buffer[256];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace

tl::expected<pid_t, LaunchError> launch(const Launch& job) {
  if (const int error = enterable(job.cwd); error != 0) {
    return tl::unexpected(
        LaunchError{fmt::format("cannot enter {}: {}", job.cwd, launch_errno_text(error)), true});
  }
  LaunchFds fds;
  // Appended, never truncated: a second wrapper of the job (which exits at once) must not clear
  // the first one's output.
  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  fds.fd[0] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  fds.fd[1] = ::open(job.stdout_path.c_str(), flags, 0644);
  fds.fd[2] = ::open(job.stderr_path.c_str(), flags, 0644);
  if (fds.fd[0] < 0 || fds.fd[1] < 0 || fds.fd[2] < 0) {
    return tl::unexpected(
        LaunchError{fmt::format("cannot open the output files: {}", launch_errno_text(errno))});
  }
  if (::pipe2(&fds.fd[3], O_CLOEXEC) != 0) {
    return tl::unexpected(LaunchError{"pipe: " + launch_errno_text(errno)});
  }
  pid_t shell = 0;
  if (const int rc = spawn(job, fds, shell); rc != 0) {
    return tl::unexpected(LaunchError{"exec /bin/sh: " + launch_errno_text(rc), rc == ENOENT});
  }
  ::close(fds.fd[4]);
  fds.fd[4] = -1;
  const std::string report = read_report(fds.fd[3]);
  int status = 0;
  while (::waitpid(shell, &status, 0) < 0 && errno == EINTR) {
  }
  if (report.rfind("P ", 0) == 0) {
    const long pid = std::strtol(report.c_str() + 2, nullptr, 10);
    if (pid > 0) return static_cast<pid_t>(pid);
  }
  if (report.rfind("E ", 0) == 0) {
    std::string why = report.substr(2);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return tl::unexpected(LaunchError{why, true});
  }
  return tl::unexpected(LaunchError{"no process (the launcher could not start it)"});
}

}  // namespace celos::command_job
