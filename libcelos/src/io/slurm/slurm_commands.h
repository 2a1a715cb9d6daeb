// The pieces of the Slurm service that only read and write text (celos/slurm_service.h): the
// argument vectors of sbatch, squeue, sacct and scontrol, the parsers of their answers (as
// Slurm 22.05 prints them) and the job wrapper. Internal to libcelos/src/io.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "celos/slurm_service.h"
#include "io/job_environment.h"

namespace celos::slurm {

// One line of `squeue --format=%i|%T|%r` or `sacct --parsable2 --format=JobID,State`.
struct QueueEntry {
  std::string state;   // PENDING, RUNNING, COMPLETED, ...
  std::string reason;  // JobHeldUser, None, ... (empty for sacct)
};

// Job id -> entry. Lines that are not `id|state[|reason]` (job steps such as `12.batch` too)
// are skipped.
std::map<std::string, QueueEntry> parse_queue(std::string_view text);

// The job id of `sbatch --parsable`'s answer ("12" or "12;cluster"); empty when it is not one.
std::string parse_job_id(std::string_view text);

// True when a Slurm command's error output says the controller could not be reached (or
// answered too late): an outage, not a refusal.
bool controller_unreachable(std::string_view err);

// True when the command's error output says that none of the asked jobs is known.
bool invalid_job_id(std::string_view err);

// Per job, the complaint of `scontrol release`/`scancel` about it ("... for job 12" lines).
std::map<std::string, std::string> per_job_complaints(std::string_view err);

// Slurm's error output as one line for a message (`sbatch: error: ` prefixes dropped).
std::string one_line(std::string_view err);

// A Slurm job id: digits only.
bool is_job_id(std::string_view id);

// An environment variable naming a file of the job directory, which exists only once sbatch
// answered: the wrapper exports `name` = `prefix` + <job dir>/`file` (input lists, JobInputs).
struct JobDirVariable {
  std::string name, prefix, file;
};

// The batch script given to sbatch: exports `variables`, runs <slot dir>/$SLURM_JOB_ID/script
// (in that directory unless `enter_job_dir` is false) and records its exit status in `exit` there.
std::string wrapper_script(const std::string& slot_dir, bool enter_job_dir,
                           const std::vector<JobDirVariable>& variables = {});

// The workflow's script as written to the job directory: `#!/bin/sh` added when it has no `#!`.
std::string job_script(const std::string& script);

// The argument vector of sbatch (without the program) for a slot.
std::vector<std::string> sbatch_args(const SlurmServiceOptions& options, const SlotId& slot,
                                     const std::string& slot_dir);

// The environment of the job: CELOS_* of SPEC §7.2 and the workflow's `env` (shared by every
// executor that runs commands).
using celos::job_environment;

}  // namespace celos::slurm
