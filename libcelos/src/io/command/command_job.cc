// Reading a command job's directory (command_job.h).
#include "command_job.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace celos::command_job {
namespace {

std::string trimmed_record(std::string text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::optional<ExternalStatus> read_exit(const std::string& dir) {
  auto text = read_file(dir + "/exit");
  if (!text) return std::nullopt;
  const std::string status = trimmed_record(*text);
  if (status == "0") return ExternalStatus::kSuccess;
  return ExternalStatus(JobState::kFailure, fmt::format("the command exited with status {}",
                                                        status.empty() ? "?" : status));
}

// Seconds since the heartbeat file was last written (by the file system's clock), if any.
// The real clock on purpose: the mtime was stamped by it, not by an injected one.
std::optional<long long> heartbeat_age(const std::string& dir) {
  struct stat info {};
  if (::stat((dir + "/heartbeat").c_str(), &info) != 0) return std::nullopt;
  return static_cast<long long>(::time(nullptr)) - static_cast<long long>(info.st_mtime);
}

ExternalStatus started_status(const std::string& dir, const StartedRecord& started,
                              std::chrono::seconds heartbeat_timeout);

ExternalStatus not_started_status(const std::string& dir, std::chrono::seconds heartbeat_timeout) {
  if (auto error = read_file(dir + "/start-error")) {
    return ExternalStatus(JobState::kFailure, "the job could not start: " + trimmed_record(*error));
  }
  const auto process = read_pid_file(dir);
  if (process && is_running(*process)) return ExternalStatus::kRunning;  // about to record
  if (auto exit = read_exit(dir)) return *exit;
  // The wrapper may have recorded itself and ended since the first look.
  if (auto started = read_started(dir)) return started_status(dir, *started, heartbeat_timeout);
  if (::access((dir + "/kill-request").c_str(), F_OK) == 0) {
    return ExternalStatus(JobState::kFailure, "killed before it started");
  }
  // A wrapper of the old format (no started record) that ended without an exit status.
  if (process) {
    return ExternalStatus(JobState::kFailure,
                          fmt::format("process {} ended without an exit status", process->pid));
  }
  return ExternalStatus::kSubmitted;  // never started: the step starts it (exactly once)
}

ExternalStatus started_status(const std::string& dir, const StartedRecord& started,
                              std::chrono::seconds heartbeat_timeout) {
  const Machine& here = this_machine();
  if (started.host == here.host && started.boot == here.boot) {
    if (inspect_process(started.pid).alive) return ExternalStatus::kRunning;
    if (auto exit = read_exit(dir)) return *exit;  // it may have ended between the checks
    return ExternalStatus(
        JobState::kFailure,
        fmt::format("the job's process {} ended without an exit status", started.pid));
  }
  const auto age = heartbeat_age(dir);
  if (age && *age < heartbeat_timeout.count()) return ExternalStatus::kRunning;
  if (auto exit = read_exit(dir)) return *exit;
  return ExternalStatus(
      JobState::kFailure,
      fmt::format("the job ran on host {} (boot {}) and its heartbeat {}", started.host,
                  started.boot,
                  age ? fmt::format("stopped {} s ago", *age) : std::string("is missing")));
}

}  // namespace

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(fmt::format("cannot read {}: {}", path, std::strerror(errno)),
                ErrorCode::kNotFound);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<void> write_file_atomically(const std::string& path, const std::string& data) {
  const std::string temp = path + ".tmp";
  {
    errno = 0;
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return fail(fmt::format("cannot create {}: {}", temp, std::strerror(errno)));
    out << data;
    if (!out.flush()) {
      return fail(fmt::format("cannot write {}: {}", temp,
                              errno != 0 ? std::strerror(errno) : "write error (disk full?)"));
    }
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    return fail(fmt::format("cannot rename {} to {}: {}", temp, path, std::strerror(errno)));
  }
  return {};
}

std::optional<std::string> host_of_job(const std::string& external_id) {
  const auto at = external_id.rfind('@');
  if (at == std::string::npos || at + 1 == external_id.size()) return std::nullopt;
  return external_id.substr(at + 1);
}

ExternalStatus unseen_job_status(const std::string& dir, const std::string& external_id) {
  const auto host = host_of_job(external_id);
  return ExternalStatus(
      JobState::kFailure,
      fmt::format("the job ran on host {}, but its directory {} cannot be seen from host {} "
                  "(in a cluster, put --jobs-dir on storage every node mounts)",
                  host ? *host : std::string("(not recorded in its id)"), dir,
                  this_machine().host));
}

const Machine& this_machine() {
  static const Machine machine = [] {
    Machine m;
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) == 0) m.host = name;
    if (m.host.empty()) m.host = "localhost";
    auto boot = read_file("/proc/sys/kernel/random/boot_id");
    m.boot = boot ? trimmed_record(*boot) : "unknown";
    return m;
  }();
  return machine;
}

std::optional<StartedRecord> read_started(const std::string& dir) {
  auto text = read_file(dir + "/started");
  if (!text) return std::nullopt;
  StartedRecord record;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto equals = line.find('=');
    if (equals == std::string::npos) continue;
    const std::string key = line.substr(0, equals), value = trimmed_record(line.substr(equals + 1));
    if (key == "host") record.host = value;
    if (key == "boot") record.boot = value;
    if (key == "pid") record.pid = static_cast<pid_t>(std::strtol(value.c_str(), nullptr, 10));
  }
  return record;
}

ProcessInfo inspect_process(pid_t pid) {
  ProcessInfo info;
  if (pid <= 1) return info;
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

ExternalStatus job_status(const std::string& dir, std::chrono::seconds heartbeat_timeout) {
  if (auto exit = read_exit(dir)) return *exit;
  if (auto started = read_started(dir)) return started_status(dir, *started, heartbeat_timeout);
  return not_started_status(dir, heartbeat_timeout);
}

}  // namespace celos::command_job
