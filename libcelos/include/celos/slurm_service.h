// The Slurm external service (SPEC §12, §16): each slot runs `script` as a Slurm batch job.
//
// submit(): `sbatch --parsable --hold` with the job name `<workflow>@<slot time>`, the options,
// the CELOS_* environment of SPEC §7.2 plus `env` (through sbatch's own environment, which
// Slurm hands to the job), and a small wrapper script on standard input. The job id is the text
// before any `;` of sbatch's answer. celos then creates the job directory
//
//   <jobs dir>/<workflow>/<yyyy-mm-dd>/<HH:MM:SS.sssZ>/<job id>/
//
// and writes the workflow's script there (`script`, with `#!/bin/sh` added when it has no `#!`
// line); sbatch was told `--output=<slot dir>/%j/stdout` and `--error=<slot dir>/%j/stderr`.
// The wrapper runs `script` and records its exit status in `exit` (atomically), so the final
// state is known without Slurm accounting.
//
// start(): `scontrol release` (start_many(): one call for all jobs of a step).
//
// status_many(): one `squeue` for all jobs; for jobs that left the queue the recorded `exit`
// files, then at most one `sacct` (skipped once Slurm said accounting is disabled). A job
// nobody knows any more and that left no exit record is a failure with a message. A held job
// (PENDING, reason JobHeldUser) is ExternalStatus::kSubmitted.
//
// kill(): `scancel`. Every command is bounded by `timeout`; after one timed out or found the
// controller unreachable, commands to that controller fail at once for `outage_pause`. A refused
// sbatch is an Error with ErrorCode::kInvalid and Slurm's message; a controller that cannot be
// reached, or a timeout, is ErrorCode::kFailed.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "celos/clock.h"
#include "celos/external_service.h"
#include "celos/process_runner.h"

namespace celos {

struct SlurmServiceOptions {
  std::string script;                      // the job script's text (time variables replaced)
  std::string partition, account, qos;     // --partition --account --qos (empty: not given)
  std::string time;                        // --time, a Slurm time limit such as "01:30:00"
  std::optional<std::int64_t> cpus;        // --cpus-per-task
  std::string mem;                         // --mem, e.g. "4G"
  std::string cwd;                         // --chdir; empty = the job directory
  std::map<std::string, std::string> env;  // extra environment variables (time variables replaced)
  std::vector<std::string> extra_args;     // each one --name[=value]; see validate_slurm_extra_args
  std::string jobs_dir;                    // where job directories live (`--jobs-dir`)
  std::string slurm_bin;                   // directory of sbatch & co; empty = found in PATH
  std::chrono::milliseconds timeout{30000};  // bound of every Slurm command (`--io-timeout`)
  // After a command timed out or could not reach the controller, further commands to the same
  // controller (same slurm_bin, SLURM_CONF and jobs_dir) fail at once for this long (SPEC §16:
  // an endpoint's remaining calls in the step fail at once).
  std::chrono::milliseconds outage_pause{10000};
  Clock* clock = &system_clock();  // measures outage_pause (monotonic); not owned
};

// The Slurm service runs its commands with `runner`.
ExternalServicePtr make_slurm_external_service(SlurmServiceOptions options,
                                               ProcessRunnerPtr runner);

// Checks extraArgs: each entry one `--name` or `--name=value`, and none of the options celos
// controls (--output, --error, --chdir, --job-name, --wrap, --parsable, --hold, --export,
// --uid, --gid, --array, --dependency, --input, and their short forms). Returns the problem.
[[nodiscard]] Result<void> validate_slurm_extra_args(const std::vector<std::string>& args);

// <jobs dir>/<workflow>/<yyyy-mm-dd>/<HH:MM:SS.sssZ>: the directory of a slot's Slurm jobs.
std::string slurm_slot_dir(const std::string& jobs_dir, const SlotId& slot);

// A Slurm job state (`squeue %T`, `sacct State`; "CANCELLED by 0" counts as CANCELLED) as
// SPEC §12 maps it: unknown states are running.
JobState slurm_job_state(std::string_view state);

}  // namespace celos
