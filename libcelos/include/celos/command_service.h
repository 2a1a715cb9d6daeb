// The local command external service (SPEC §7.2): runs a shell command on this host for each
// slot, so that workflows can run with no Hadoop at all.
//
// submit() creates the job directory
//
//   <db>/jobs/<workflow>/<yyyy-mm-dd>/<HH:MM:SS.sssZ>/<external id>/
//
// and records the command there (`command`); start() launches `/bin/sh -c <command>` in a new
// session (double fork, so the job is detached from the server and survives its restart) with
// stdout and stderr redirected to the `stdout` and `stderr` files of the job directory, and
// records the job's process id in `pid`. A small shell wrapper writes the exit status to
// `exit` when the command ends (atomically: `exit.tmp` then rename).
//
// status(): `exit` holds 0 -> success, anything else -> failure; no `exit` yet -> running while
// the recorded process exists, failure when it is gone (killed, machine rebooted). Everything
// status() and kill() need is in the job directory, so a new service object (a restarted
// server) answers for jobs started by an earlier one.
//
// kill() sends SIGTERM to the job's process group, waits up to `kill_grace` for it to end, then
// sends SIGKILL. It records `killed` in the job directory; killing an ended job is not an error.
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

#include "celos/external_service.h"
#include "celos/slot.h"

namespace celos {

struct CommandServiceOptions {
  std::string command;                     // run with /bin/sh -c
  std::map<std::string, std::string> env;  // extra environment variables
  std::string cwd;                         // working directory; empty = the job directory
  std::string db_dir;                      // the state database directory (jobs under <db>/jobs)
  std::chrono::milliseconds kill_grace{2000};  // SIGTERM -> SIGKILL
};

ExternalServicePtr make_command_external_service(CommandServiceOptions options);

// The job directory of a run: <db>/jobs/<workflow>/<yyyy-mm-dd>/<HH:MM:SS.sssZ>/<external id>.
std::string command_job_dir(const std::string& db_dir, const SlotId& slot,
                            const std::string& external_id);

}  // namespace celos
