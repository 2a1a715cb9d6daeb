// The job directory of a command job (celos/command_service.h), read and written by the
// service. Internal to io/.
//
//   command        the command line (submit)
//   pid            "<pid> <start ticks>" of the wrapper, written by start() (may be missing:
//                  the server can die before writing it)
//   started        written by the job's own wrapper before it runs the command, atomically and
//                  exclusively (a hard link: of two wrappers of one job only one runs):
//                  "host=<host name>\nboot=<boot id>\npid=<wrapper pid = process group>\n"
//   heartbeat      rewritten by the wrapper every heartbeat interval while the command runs
//   exit           the exit status, written atomically by the wrapper when the command ends
//   kill-request   written by kill(): the wrapper obeys it (a kill from another host), and a
//                  job that has not started yet never starts
//   killed         written by kill() once the job is gone
//   start-error    why start() could not launch the job (cannot enter cwd): a failure
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <sys/types.h>

#include "celos/error.h"
#include "celos/external_service.h"

namespace celos::command_job {

Result<std::string> read_file(const std::string& path);
// temp file + rename: a reader never sees a half-written file.
Result<void> write_file_atomically(const std::string& path, const std::string& data);

// This machine: its host name and boot id (/proc/sys/kernel/random/boot_id).
struct Machine {
  std::string host;
  std::string boot;
};
const Machine& this_machine();

struct StartedRecord {
  std::string host;
  std::string boot;
  pid_t pid = 0;
};
std::optional<StartedRecord> read_started(const std::string& dir);

// What /proc says about a process: gone (or a zombie), or alive since `start_ticks`.
struct ProcessInfo {
  bool alive = false;
  unsigned long long start_ticks = 0;
};
ProcessInfo inspect_process(pid_t pid);

struct RecordedProcess {
  pid_t pid = 0;
  unsigned long long start_ticks = 0;  // 0 = unknown
};
std::optional<RecordedProcess> read_pid_file(const std::string& dir);
bool is_running(const RecordedProcess& process);

// The host named by an external id `cmd-…@<host>` (ids of older versions name none).
std::optional<std::string> host_of_job(const std::string& external_id);
// The status of a job whose directory `dir` this host cannot see: FAILURE naming the host the
// job ran on (from its id) and this host (SPEC §11: --jobs-dir not on shared storage).
ExternalStatus unseen_job_status(const std::string& dir, const std::string& external_id);

// The job's state from its directory alone (see command_service.h for the rules).
ExternalStatus job_status(const std::string& dir, std::chrono::seconds heartbeat_timeout);

}  // namespace celos::command_job
