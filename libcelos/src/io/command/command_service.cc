// The local command external service (celos/command_service.h).
//
// Everything about a job lives in its directory so that a restarted server (a new service
// object) can still answer status() and kill(): the pid file names the process (and its start
// time, so that a pid reused after a reboot is not mistaken for our job), and the shell wrapper
// records the exit status itself because the server is not the job's parent.
#include "celos/command_service.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "celos/clock.h"
#include "celos/dataset.h"
#include "celos/time.h"
#include "command_job.h"
#include "io/command/job_launch.h"
#include "io/job_environment.h"

extern char** environ;

namespace celos {
namespace {

namespace fs = std::filesystem;

// The job's wrapper: records itself, keeps a heartbeat, runs the command, records the exit
// status (command_job.h has the files). $1 = the command, $2 = the job directory, $3 = the host
// name, $4 = the boot id, $5 = the heartbeat interval in seconds, $6 = the job-end events
// directory (command_job_events_dir; written to only when it exists).
//
// The started record is a hard link of a complete file: link() fails when `started` exists, so
// of two wrappers of one job (start() called again after a crash) exactly one runs the command.
// The heartbeat loop also obeys a kill request (a kill from another host): TERM to the job's
// process group after recording exit status 143, a grace period, then KILL.
constexpr const char* kWrapper =
    "d=$2\n"
    "[ -e \"$d/kill-request\" ] && exit 0\n"
    "t=\"$d/.started.$$\"\n"
    "printf 'host=%s\\nboot=%s\\npid=%s\\n' \"$3\" \"$4\" \"$$\" > \"$t\" || exit 1\n"
    "if ! ln \"$t\" \"$d/started\" 2>/dev/null; then rm -f \"$t\"; exit 0; fi\n"
    "rm -f \"$t\"\n"
    "sync \"$d/started\" \"$d\" 2>/dev/null\n"
    "(\n"
    "  trap 'kill $s 2>/dev/null; exit 0' TERM\n"
    "  n=0\n"
    "  while :; do\n"
    "    n=$((n+1)); printf '%s\\n' \"$n\" > \"$d/heartbeat\"\n"
    "    if [ -e \"$d/kill-request\" ]; then\n"
    "      [ -e \"$d/exit\" ] || { printf '143\\n' > \"$d/exit.tmp\" && mv -f \"$d/exit.tmp\" "
    "\"$d/exit\"; }\n"
    "      trap '' TERM; kill -TERM 0; sleep 2; kill -KILL 0\n"
    "    fi\n"
    "    sleep \"$5\" & s=$!; wait $s\n"
    "  done\n"
    ") </dev/null >/dev/null 2>&1 &\n"
    "h=$!\n"
    "/bin/sh -c \"$1\"\n"
    "s=$?\n"
    "kill $h 2>/dev/null\n"
    "printf '%s\\n' \"$s\" > \"$d/exit.tmp\" && mv -f \"$d/exit.tmp\" \"$d/exit\"\n"
    // Issue 28: tells a listening server at once (a file moved into $6, named after the job).
    "[ -d \"$6\" ] && { printf '%s\\n' \"$CELOS_WORKFLOW_ID\" > \"$6/.${d##*/}\" && "
    "mv -f \"$6/.${d##*/}\" \"$6/${d##*/}\"; } 2>/dev/null\n";

using command_job::inspect_process;
using command_job::is_running;
using command_job::read_pid_file;
using command_job::write_file_atomically;

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

Result<void> validate_external_id(const std::string& id) {
  if (id.empty() || id == "." || id == ".." || id.find('/') != std::string::npos) {
    return fail(fmt::format("invalid command job id \"{}\"", id), ErrorCode::kInvalid);
  }
  return {};
}

// The environment of a job: the server's, then the slot variables, then the workflow's `env`.
std::vector<std::string> process_environment(const SlotId& slot,
                                             const std::map<std::string, std::string>& extra) {
  const std::map<std::string, std::string> vars = celos::job_environment(slot, extra);
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

class CommandService : public ExternalService {
 public:
  explicit CommandService(CommandServiceOptions options) : options_(std::move(options)) {
    if (options_.jobs_dir.empty() && !options_.db_dir.empty())
      options_.jobs_dir = options_.db_dir + "/jobs";
  }

  Result<std::string> submit(const SlotId& slot) override { return submit_with(slot, {}); }

  // The dataset inputs are recorded in the job directory (`inputs`: one `<name>\t<value>` line
  // per variable) so that start(), maybe in a restarted server, runs what was submitted.
  Result<std::string> submit_with(const SlotId& slot, const SubmitContext& context) override {
    if (options_.jobs_dir.empty()) {
      return fail("command service: no jobs directory configured (--db or --jobs-dir)");
    }
    const std::string id = new_external_id();
    const std::string dir = command_job_dir_in(options_.jobs_dir, slot, id);
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
    const std::string dir = command_job_dir_in(options_.jobs_dir, slot, external_id);
    // Exactly once: a job that recorded itself, ended, was killed or is being launched by an
    // earlier start() is left alone (the wrapper's started record settles any race).
    if (exists(dir + "/started") || exists(dir + "/exit") || exists(dir + "/kill-request") ||
        exists(dir + "/start-error")) {
      return {};
    }
    if (auto process = read_pid_file(dir); process && is_running(*process)) return {};
    return launch(slot, dir);
  }

  Result<ExternalStatus> status(const SlotId& slot, const std::string& external_id) override {
    if (auto valid = validate_external_id(external_id); !valid)
      return tl::unexpected(valid.error());
    const std::string dir = command_job_dir_in(options_.jobs_dir, slot, external_id);
    std::error_code error;
    if (!fs::is_directory(dir, error)) return command_job::unseen_job_status(dir, external_id);
    return command_job::job_status(dir, options_.heartbeat_timeout);
  }

  Result<void> kill(const SlotId& slot, const std::string& external_id) override {
    if (auto valid = validate_external_id(external_id); !valid) return valid;
    const std::string dir = command_job_dir_in(options_.jobs_dir, slot, external_id);
    if (exists(dir + "/exit")) return {};
    // First the durable wish: a wrapper that has not started yet never will, and the wrapper
    // of a job on another host obeys it.
    const Time now = options_.clock->now();
    if (auto asked = write_file_atomically(dir + "/kill-request", format_time(now) + "\n");
        !asked) {
      return asked;
    }
    const auto started = command_job::read_started(dir);
    const auto& here = command_job::this_machine();
    if (started && (started->host != here.host || started->boot != here.boot)) return {};
    std::optional<command_job::RecordedProcess> process = read_pid_file(dir);
    if (started && started->pid > 1) process = command_job::RecordedProcess{started->pid, 0};
    if (process && is_running(*process)) terminate_group(*process);
    return write_file_atomically(dir + "/killed", format_time(now) + "\n");
  }

  std::string describe() const override { return fmt::format("command \"{}\"", options_.command); }
  std::string_view kind() const override { return "command"; }
  // The jobs run on this host: its limits are those of "command <host name>".
  std::string limit_endpoint() const override {
    return "command " + command_job::this_machine().host;
  }
  // The wrapper writes the job's output into the jobs directory; celos writes its done flags.
  ServiceTraits traits() const override {
    return {.writes_done_flags = true, .keeps_job_output = true};
  }

 private:
  std::string new_external_id() {
    static std::atomic<unsigned> counter{0};
    static const unsigned salt = std::random_device{}();
    // The real clock on purpose: the id must be unique across restarts, whatever the clock.
    const auto now = system_clock().now().time_since_epoch().count();
    // The host goes into the id: a leader that cannot see the job directory (a --jobs-dir not
    // shared by the cluster's nodes) can still say where the job ran (SPEC §11).
    std::string host = command_job::this_machine().host;
    std::replace(host.begin(), host.end(), '/', '_');
    return fmt::format("cmd-{}-{}-{}-{:08x}@{}", now, ::getpid(), ++counter, salt, host);
  }

  // setsid() made the wrapper a process group leader: its pid is the group id.
  void terminate_group(const command_job::RecordedProcess& process) const {
    ::kill(-process.pid, SIGTERM);
    // The real clock on purpose: the grace is what a real process gets to exit.
    Clock& real = system_clock();
    const Clock::Monotonic deadline = real.monotonic() + options_.kill_grace;
    while (is_running(process) && real.monotonic() < deadline) {
      real.sleep_for(std::chrono::milliseconds(10));
    }
    if (is_running(process)) ::kill(-process.pid, SIGKILL);
  }

  // The dataset inputs recorded by submit_with(): `${inputs.<id>}` and CELOS_INPUT_<ID>.
  static SubmitContext read_inputs(const std::string& dir) {
    SubmitContext inputs;
    std::ifstream in(dir + "/inputs", std::ios::binary);
    std::string line;
    while (in && std::getline(in, line)) {
      const auto tab = line.find('\t');
      if (tab == std::string::npos) continue;
      const std::string name = line.substr(0, tab), value = line.substr(tab + 1);
      inputs.variables[name] = value;
      if (name.rfind("inputs.", 0) == 0) inputs.env[input_env_name(name.substr(7))] = value;
    }
    return inputs;
  }

  // The job's view of its inputs: lists in files of the job directory (dataset.h JobInputs),
  // written here (again, the same, when a restarted server launches the job).
  static Result<SubmitContext> prepare_inputs(const std::string& dir) {
    JobInputs job = job_inputs(read_inputs(dir), dir);
    for (const auto& [path, text] : job.files) {
      if (auto written = write_file_atomically(path, text); !written) {
        return tl::unexpected(written.error());
      }
    }
    return std::move(job.context);
  }

  Result<void> launch(const SlotId& slot, const std::string& dir) {
    auto prepared = prepare_inputs(dir);
    if (!prepared) return tl::unexpected(prepared.error());
    const SubmitContext& inputs = *prepared;
    const std::string command =
        replace_variables(replace_time_variables(options_.command, slot.time), inputs.variables);
    const std::string cwd =
        options_.cwd.empty() ? dir : replace_time_variables(options_.cwd, slot.time);
    std::map<std::string, std::string> extra = inputs.env;
    for (const auto& [name, value] : options_.env) {
      extra[name] = replace_variables(value, inputs.variables);
    }
    const auto& machine = command_job::this_machine();
    command_job::Launch job{
        .cwd = cwd,
        .args = {"-c", kWrapper, "celos-job", command, dir, machine.host, machine.boot,
                 std::to_string(std::max<long long>(1, options_.heartbeat_interval.count())),
                 command_job_events_dir(options_.jobs_dir)},
        .env = process_environment(slot, extra),
        .stdout_path = dir + "/stdout",
        .stderr_path = dir + "/stderr"};
    auto pid = command_job::launch(job);
    if (!pid) {
      if (pid.error().permanent) {
        // The job can never run (no such cwd): recorded, so that status() says failure.
        [[maybe_unused]] auto recorded =
            write_file_atomically(dir + "/start-error", pid.error().message + "\n");
      }
      return fail(fmt::format("cannot start job {}: {}", dir, pid.error().message));
    }
    const command_job::ProcessInfo info = inspect_process(*pid);
    return write_file_atomically(dir + "/pid", fmt::format("{} {}\n", *pid, info.start_ticks));
  }

  CommandServiceOptions options_;
};

}  // namespace

std::string command_job_dir_in(const std::string& jobs_dir, const SlotId& slot,
                               const std::string& external_id) {
  return fmt::format("{}/{}/{}/{}/{}", jobs_dir, slot.workflow, format_day(slot.time),
                     format_time_of_day(slot.time), external_id);
}

std::string command_job_events_dir(const std::string& jobs_dir) { return jobs_dir + "/.events"; }

std::string command_job_dir(const std::string& db_dir, const SlotId& slot,
                            const std::string& external_id) {
  return command_job_dir_in(db_dir + "/jobs", slot, external_id);
}

ExternalServicePtr make_command_external_service(CommandServiceOptions options) {
  return std::make_shared<CommandService>(std::move(options));
}

}  // namespace celos
