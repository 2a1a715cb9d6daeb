// The local command external service (SPEC §7.2): runs a shell command on this host for each
// slot, so that workflows can run with no Hadoop at all.
//
// submit() creates the job directory
//
//   <db>/jobs/<workflow>/<yyyy-mm-dd>/<HH:MM:SS.sssZ>/<external id>/
//
// and records the command there (`command`); start() launches a small shell wrapper in a new
// session (double fork, so the job is detached from the server and survives its restart) with
// stdout and stderr appended to the `stdout` and `stderr` files of the job directory, and
// records the wrapper's process id in `pid`. The wrapper itself, before it runs
// `/bin/sh -c <command>`, writes a `started` record (host, boot id, pid) atomically and
// exclusively, keeps a `heartbeat` file fresh every heartbeat_interval, and writes the exit
// status to `exit` when the command ends (atomically: `exit.tmp` then rename). See
// io/command/command_job.h for the files.
//
// Exactly once (SPEC §16): start() does nothing for a job that has a started record, an exit
// status, a kill request or a running wrapper; and of two wrappers of one job only the one that
// creates `started` runs the command. So the step may call start() again for a job whose start
// a crash interrupted.
//
// status(): `exit` holds 0 -> success, anything else -> failure. No `exit`: with a started
// record of this host and boot -> running while the wrapper's process lives, else failure; of
// another host or boot -> running while the heartbeat is younger than heartbeat_timeout, else
// failure with a message naming the host. No started record -> kSubmitted (never started: the
// step starts it), except running while the launched wrapper is about to record itself and
// failure when start() could not launch it (`start-error`, e.g. no such cwd) or it was killed.
// A missing job directory is a failure naming the host the job ran on (external ids are
// `cmd-<ms>-<pid>-<n>-<salt>@<host>`) and this host: after a takeover, a leader that cannot see
// the directory of a job another node ran (a --jobs-dir that is not shared) fails the slot,
// and retries apply (SPEC §11). Everything status() and kill() need is
// in the job directory, so a new service object (a restarted server, another node with the same
// jobs directory) answers for jobs started by an earlier one.
//
// kill() first writes `kill-request` (a job that has not started never will; a wrapper on
// another host obeys it within a heartbeat interval), then, for a job of this host, sends
// SIGTERM to the job's process group, waits up to `kill_grace` for it to end, then sends
// SIGKILL, and records `killed`. Killing an ended job is not an error.
//
// Time variables (${year} ... ${second}) are replaced with the slot's in the command, in the
// values of `env` and in `cwd`. The job's environment is the server's, plus CELOS_WORKFLOW_ID,
// CELOS_SLOT_TIME (`2015-09-13T13:00:00.000Z`), CELOS_YEAR, CELOS_MONTH, CELOS_DAY, CELOS_HOUR,
// CELOS_MINUTE, CELOS_SECOND (zero-padded like the time variables), plus `env` (which wins).
//
// Calls for one workflow come from one thread at a time; different services may run in
// parallel. The service never leaves zombies behind: it reaps the intermediate process itself,
// and the job is adopted by init.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "celos/clock.h"
#include "celos/external_service.h"
#include "celos/slot.h"

namespace celos {

struct CommandServiceOptions {
  std::string command;                     // run with /bin/sh -c
  std::map<std::string, std::string> env;  // extra environment variables
  std::string cwd;                         // working directory; empty = the job directory
  std::string db_dir;                      // the state database directory (jobs under <db>/jobs)
  std::string jobs_dir = {};               // --jobs-dir: where the job directories go instead
  std::chrono::milliseconds kill_grace{2000};  // SIGTERM -> SIGKILL
  // The job's wrapper rewrites `heartbeat` this often; a job of another host (or boot) with no
  // exit status is running while its heartbeat is younger than heartbeat_timeout (SPEC §16).
  std::chrono::seconds heartbeat_interval{10};
  std::chrono::seconds heartbeat_timeout{60};
  // The time written into kill-request and killed. Not owned.
  Clock* clock = &system_clock();
};

ExternalServicePtr make_command_external_service(CommandServiceOptions options);

// The job directory of a run: <db>/jobs/<workflow>/<yyyy-mm-dd>/<HH:MM:SS.sssZ>/<external id>.
// The job directory of a run under a jobs directory (--jobs-dir).
std::string command_job_dir_in(const std::string& jobs_dir, const SlotId& slot,
                               const std::string& external_id);
std::string command_job_dir(const std::string& db_dir, const SlotId& slot,
                            const std::string& external_id);
// Where a job's wrapper reports its end (issue 28), when the directory exists: a file named
// after the job's external id holding its workflow id, moved in complete. celos-server creates
// it and watches it with --autoSchedule; nobody else needs it.
std::string command_job_events_dir(const std::string& jobs_dir);

}  // namespace celos
