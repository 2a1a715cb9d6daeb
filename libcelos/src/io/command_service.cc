// The local command external service (celos/command_service.h).
//
// Everything about a job lives in its directory so that a restarted server (a new service
// object) can still answer status() and kill(): the pid file names the process (and its start
// time, so that a pid reused after a reboot is not mistaken for our job), and the shell wrapper
// records the exit status itself because the server is not the job's parent.
#include "celos/command_service.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "celos/dataset.h"
#include "celos/time.h"

extern char** environ;

namespace celos {
namespace {

namespace fs = std::filesystem;

// Runs the command as a child of a wrapper shell, which records the exit status atomically.
// $1 = the command, $2 = the job directory.
constexpr const char* kWrapper =
    "/bin/sh -c \"$1\"\n"
    "s=$?\n"
    "printf '%s\\n' \"$s\" > \"$2/exit.tmp\" && mv -f \"$2/exit.tmp\" \"$2/exit\"\n";

std::string errno_text(int error) { return std::strerror(error); }

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(fmt::format("cannot read {}", path), ErrorCode::kNotFound);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// temp file + rename: a reader never sees a half-written pid or command file.
Result<void> write_file_atomically(const std::string& path, const std::string& data) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << data;
    if (!out.flush()) return fail(fmt::format("cannot write {}", temp));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    return fail(fmt::format("cannot rename {} to {}: {}", temp, path, errno_text(errno)));
  }
  return {};
}

// What /proc says about a process: gone (or a zombie nobody reaped yet), or alive since
// `start_ticks` (field 22 of /proc/<pid>/stat, clock ticks since boot).
struct ProcessInfo {
  bool alive = false;
  unsigned long long start_ticks = 0;
};

ProcessInfo inspect_process(pid_t pid) {
  ProcessInfo info;
  auto stat = read_file(fmt::format("/proc/{}/stat", pid));
  if (!stat) {
    // No /proc (or a race with the process ending): fall back to the signal probe.
    info.alive = ::kill(pid, 0) == 0 || errno == EPERM;
    return info;
  }
  // The command name may contain spaces and parentheses: fields start after the last ')'.
  const auto close = stat->rfind(')');
  if (close == std::string::npos) return info;
  std::istringstream fields(stat->substr(close + 1));
  std::string state;
  fields >> state;
  if (state == "Z" || state == "X" || state == "x") return info;
  std::string skip;
  for (int field = 4; field < 22; ++field) fields >> skip;
  fields >> info.start_ticks;
  info.alive = true;
  return info;
}

struct RecordedProcess {
  pid_t pid = 0;
  unsigned long long start_ticks = 0;  // 0 = unknown
};

std::optional<RecordedProcess> read_pid_file(const std::string& dir) {
  auto text = read_file(dir + "/pid");
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  long long pid = 0;
  RecordedProcess process;
  if (!(in >> pid) || pid <= 1) return std::nullopt;
  process.pid = static_cast<pid_t>(pid);
  in >> process.start_ticks;
  return process;
}

bool is_running(const RecordedProcess& process) {
  const ProcessInfo info = inspect_process(process.pid);
  if (!info.alive) return false;
  // A different start time means the pid was reused (e.g. after a reboot): our job is gone.
  return process.start_ticks == 0 || info.start_ticks == 0 ||
         info.start_ticks == process.start_ticks;
}

Result<void> validate_external_id(const std::string& id) {
  if (id.empty() || id == "." || id == ".." || id.find('/') != std::string::npos) {
    return fail(fmt::format("invalid command job id \"{}\"", id), ErrorCode::kInvalid);
  }
  return {};
}

std::string two_digits(int value) { return fmt::format("{:02}", value); }

// The environment of a job: the server's, then the slot variables, then the workflow's `env`.
std::vector<std::string> job_environment(const SlotId& slot,
                                         const std::map<std::string, std::string>& extra) {
  const CivilTime civil = to_civil(slot.time);
  std::map<std::string, std::string> vars = {
      {"CELOS_WORKFLOW_ID", slot.workflow},
      {"CELOS_SLOT_TIME", format_time(slot.time)},
      {"CELOS_YEAR", fmt::format("{:04}", civil.year)},
      {"CELOS_MONTH", two_digits(civil.month)},
      {"CELOS_DAY", two_digits(civil.day)},
      {"CELOS_HOUR", two_digits(civil.hour)},
      {"CELOS_MINUTE", two_digits(civil.minute)},
      {"CELOS_SECOND", two_digits(civil.second)},
  };
  for (const auto& [name, value] : extra) vars[name] = replace_time_variables(value, slot.time);
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals != std::string_view::npos && vars.count(std::string(text.substr(0, equals)))) {
      continue;
    }
    env.emplace_back(text);
  }
  for (const auto& [name, value] : vars) env.push_back(name + "=" + value);
  return env;
}

// A message from the forked processes to the server: 'P' the job's pid, 'C' chdir failed,
// 'E' exec failed (value = errno).
struct LaunchMessage {
  char tag;
  int value;
};

void send(int fd, char tag, int value) {
  const LaunchMessage message{tag, value};
  [[maybe_unused]] auto written = ::write(fd, &message, sizeof message);
}

void close_other_descriptors(int keep) {
  // The job must not inherit the server's sockets (a listening socket would outlive the server).
  const auto first_kept = static_cast<unsigned>(keep);
  if (keep >= 3 && (keep == 3 || ::close_range(3, first_kept - 1, 0) == 0) &&
      ::close_range(first_kept + 1, ~0U, 0) == 0) {
    return;
  }
  const long max_fd = ::sysconf(_SC_OPEN_MAX);
  const int limit = max_fd > 0 && max_fd < 65536 ? static_cast<int>(max_fd) : 65536;
  for (int fd = 3; fd < limit; ++fd) {
    if (fd != keep) ::close(fd);
  }
}

// In the forked children only async-signal-safe calls: the server may have other threads.
[[noreturn]] void run_job(int report_fd, int null_fd, int out_fd, int err_fd, const char* cwd,
                          char* const argv[], char* const envp[]) {
  ::setsid();
  if (::chdir(cwd) != 0) {
    send(report_fd, 'C', errno);
    ::_exit(127);
  }
  ::dup2(null_fd, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  close_other_descriptors(report_fd);
  ::execve("/bin/sh", argv, envp);
  send(report_fd, 'E', errno);
  ::_exit(127);
}

class FdCloser {
 public:
  explicit FdCloser(std::initializer_list<int*> fds) : fds_(fds) {}
  ~FdCloser() {
    for (int* fd : fds_) {
      if (*fd >= 0) ::close(*fd);
    }
  }

 private:
  std::vector<int*> fds_;
};

class CommandService : public ExternalService {
 public:
  explicit CommandService(CommandServiceOptions options) : options_(std::move(options)) {}

  Result<std::string> submit(const SlotId& slot) override { return submit_with(slot, {}); }

  // The dataset inputs are recorded in the job directory (`inputs`: one `<name>\t<value>` line
  // per variable) so that start(), maybe in a restarted server, runs what was submitted.
  Result<std::string> submit_with(const SlotId& slot, const SubmitContext& context) override {
    if (options_.db_dir.empty()) {
      return fail("command service: no state database directory configured for its jobs");
    }
    const std::string id = new_external_id();
    const std::string dir = command_job_dir(options_.db_dir, slot, id);
    std::error_code error;
    fs::create_directories(dir, error);
    if (error) return fail(fmt::format("cannot create job directory {}: {}", dir, error.message()));
    auto written = write_file_atomically(
        dir + "/command",
        replace_variables(replace_time_variables(options_.command, slot.time), context.variables) +
            "\n");
    if (!written) return tl::unexpected(written.error());
    if (!context.variables.empty()) {
      std::string lines;
      for (const auto& [name, value] : context.variables) {
        if (value.find('\n') != std::string::npos) return fail("an input path contains a newline");
        lines += name + "\t" + value + "\n";
      }
      if (auto saved = write_file_atomically(dir + "/inputs", lines); !saved) {
        return tl::unexpected(saved.error());
      }
    }
    return id;
  }

  Result<void> start(const SlotId& slot, const std::string& external_id) override {
    if (auto valid = validate_external_id(external_id); !valid) return valid;
    const std::string dir = command_job_dir(options_.db_dir, slot, external_id);
    const SubmitContext inputs = read_inputs(dir);
    const std::string command =
        replace_variables(replace_time_variables(options_.command, slot.time), inputs.variables);
    const std::string cwd =
        options_.cwd.empty() ? dir : replace_time_variables(options_.cwd, slot.time);

    std::map<std::string, std::string> extra = inputs.env;
    for (const auto& [name, value] : options_.env) {
      extra[name] = replace_variables(value, inputs.variables);
    }
    std::vector<std::string> env = job_environment(slot, extra);
    std::vector<char*> envp;
    for (auto& entry : env) envp.push_back(entry.data());
    envp.push_back(nullptr);
    std::string arg0 = "sh", arg1 = "-c", wrapper = kWrapper, name = "celos-job";
    std::string command_arg = command, dir_arg = dir;
    std::vector<char*> argv = {arg0.data(),        arg1.data(),    wrapper.data(), name.data(),
                               command_arg.data(), dir_arg.data(), nullptr};

    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out_fd = ::open((dir + "/stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int err_fd = ::open((dir + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int pipe_fds[2] = {-1, -1};
    FdCloser closer({&null_fd, &out_fd, &err_fd, &pipe_fds[0], &pipe_fds[1]});
    if (null_fd < 0 || out_fd < 0 || err_fd < 0) {
      return fail(fmt::format("cannot open the output files of job {}: {}", dir,
                              errno_text(errno)));
    }
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
      return fail(fmt::format("cannot start job {}: pipe: {}", dir, errno_text(errno)));
    }

    const pid_t child = ::fork();
    if (child < 0) return fail(fmt::format("cannot start job {}: fork: {}", dir, errno_text(errno)));
    if (child == 0) {
      // The intermediate process: its only job is to let the grandchild be adopted by init.
      const pid_t job = ::fork();
      if (job == 0) {
        run_job(pipe_fds[1], null_fd, out_fd, err_fd, cwd.c_str(), argv.data(), envp.data());
      }
      send(pipe_fds[1], 'P', job < 0 ? -errno : job);
      ::_exit(0);
    }
    ::close(pipe_fds[1]);
    pipe_fds[1] = -1;
    int wait_status = 0;
    while (::waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
    }
    return read_launch_report(pipe_fds[0], dir, cwd);
  }

  Result<ExternalStatus> status(const SlotId& slot, const std::string& external_id) override {
    if (auto valid = validate_external_id(external_id); !valid) return tl::unexpected(valid.error());
    const std::string dir = command_job_dir(options_.db_dir, slot, external_id);
    if (auto exit = read_exit(dir)) return *exit;
    const auto process = read_pid_file(dir);
    if (process && is_running(*process)) return ExternalStatus::kRunning;
    // The process may have ended between the two checks: look again before calling it lost.
    if (auto exit = read_exit(dir)) return *exit;
    return ExternalStatus::kFailure;
  }

  Result<void> kill(const SlotId& slot, const std::string& external_id) override {
    if (auto valid = validate_external_id(external_id); !valid) return valid;
    const std::string dir = command_job_dir(options_.db_dir, slot, external_id);
    const auto process = read_pid_file(dir);
    if (!process || !is_running(*process)) return {};
    // setsid() made the job a process group leader: its pid is the group id.
    ::kill(-process->pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + options_.kill_grace;
    while (is_running(*process) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (is_running(*process)) ::kill(-process->pid, SIGKILL);
    const auto now =
        std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
    return write_file_atomically(dir + "/killed", format_time(now) + "\n");
  }

  std::string describe() const override { return fmt::format("command \"{}\"", options_.command); }
  std::string_view kind() const override { return "command"; }

 private:
  // The dataset inputs recorded by submit_with(): `${inputs.<id>}` and CELOS_INPUT_<ID>.
  static SubmitContext read_inputs(const std::string& dir) {
    SubmitContext inputs;
    auto text = read_file(dir + "/inputs");
    if (!text) return inputs;
    std::istringstream lines(*text);
    std::string line;
    while (std::getline(lines, line)) {
      const auto tab = line.find('\t');
      if (tab == std::string::npos) continue;
      const std::string name = line.substr(0, tab), value = line.substr(tab + 1);
      inputs.variables[name] = value;
      if (name.rfind("inputs.", 0) == 0) inputs.env[input_env_name(name.substr(7))] = value;
    }
    return inputs;
  }

  std::string new_external_id() {
    static std::atomic<unsigned> counter{0};
    static const unsigned salt = std::random_device{}();
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    return fmt::format("cmd-{}-{}-{}-{:08x}", now, ::getpid(), ++counter, salt);
  }

  static std::optional<ExternalStatus> read_exit(const std::string& dir) {
    auto text = read_file(dir + "/exit");
    if (!text) return std::nullopt;
    const auto first = text->find_first_not_of(" \t\r\n");
    const bool zero = first != std::string::npos && (*text)[first] == '0' &&
                      text->find_first_not_of(" \t\r\n", first + 1) == std::string::npos;
    return zero ? ExternalStatus::kSuccess : ExternalStatus::kFailure;
  }

  Result<void> read_launch_report(int fd, const std::string& dir, const std::string& cwd) {
    pid_t job = 0;
    std::string problem;
    LaunchMessage message{};
    for (;;) {
      const ssize_t n = ::read(fd, &message, sizeof message);
      if (n < 0 && errno == EINTR) continue;
      if (n != static_cast<ssize_t>(sizeof message)) break;
      if (message.tag == 'P' && message.value > 0) job = message.value;
      if (message.tag == 'P' && message.value < 0) problem = "fork: " + errno_text(-message.value);
      if (message.tag == 'C') problem = fmt::format("cannot enter {}: {}", cwd, errno_text(message.value));
      if (message.tag == 'E') problem = "exec /bin/sh: " + errno_text(message.value);
    }
    if (!problem.empty()) return fail(fmt::format("cannot start job {}: {}", dir, problem));
    if (job <= 0) return fail(fmt::format("cannot start job {}: no process", dir));
    const ProcessInfo info = inspect_process(job);
    return write_file_atomically(dir + "/pid", fmt::format("{} {}\n", job, info.start_ticks));
  }

  CommandServiceOptions options_;
};

}  // namespace

std::string command_job_dir(const std::string& db_dir, const SlotId& slot,
                            const std::string& external_id) {
  return fmt::format("{}/jobs/{}/{}/{}/{}", db_dir, slot.workflow, format_day(slot.time),
                     format_time_of_day(slot.time), external_id);
}

ExternalServicePtr make_command_external_service(CommandServiceOptions options) {
  return std::make_shared<CommandService>(std::move(options));
}

}  // namespace celos
