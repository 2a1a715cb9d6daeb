// External services: what runs a slot's job (Oozie, a local command; SPEC §7).
//
// The scheduler step calls submit() then start() for a slot it picks, and status() on every
// step while the slot is RUNNING. A failure to reach the service is an Error: the slot keeps
// its state and the step goes on with the other workflows. Calls for one workflow come from one
// thread at a time (steps and mutations are serialized by the caller); calls for different
// workflows may overlap (SPEC §10), so implementations are thread-safe.
//
// A submit that the service *refuses* (an HTTP 4xx from Oozie, sbatch exiting non-zero) is an
// Error with ErrorCode::kInvalid: a failed attempt of the slot (retries apply). An unreachable
// service or a timeout is ErrorCode::kFailed: the slot stays READY (SPEC §16).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "celos/error.h"
#include "celos/slot.h"

namespace celos {

// Where a job is. kSubmitted: created but not started yet (Oozie PREP, a held Slurm job, a
// command job without its started record); the step starts such a RUNNING slot's job, so an
// attempt recorded before a crash is neither lost nor started twice (SPEC §16).
enum class JobState { kRunning, kSuccess, kFailure, kSubmitted };

// A job's state and, for failures the service can explain (a job Slurm forgot, a job directory
// on another host), why. Converts from JobState, so `return ExternalStatus::kSuccess;` works.
struct ExternalStatus {
  static constexpr JobState kRunning = JobState::kRunning;
  static constexpr JobState kSuccess = JobState::kSuccess;
  static constexpr JobState kFailure = JobState::kFailure;
  static constexpr JobState kSubmitted = JobState::kSubmitted;

  JobState state = JobState::kRunning;
  std::string message;

  ExternalStatus(JobState s = JobState::kRunning, std::string why = {})  // NOLINT: implicit
      : state(s), message(std::move(why)) {}
  friend bool operator==(const ExternalStatus& a, JobState s) { return a.state == s; }
  friend bool operator==(const ExternalStatus& a, const ExternalStatus& b) = default;
};

// What a slot is handed at submit time besides its id (datasets, SPEC §14): variables to replace
// as `${name}` in its properties or command (`inputs.<dataset id>` -> instance paths joined by
// `,`) and extra environment variables of its job (`CELOS_INPUT_<ID>` -> the same).
struct SubmitContext {
  std::map<std::string, std::string> variables;
  std::map<std::string, std::string> env;
};

// What a service can do. The step and the API decide by these, never by the service's kind().
struct ServiceTraits {
  // Its jobs are best asked about together (status_many is one call, not a loop): the step gives
  // it all its RUNNING slots at once.
  bool batches_status = false;
  // Likewise for start_many (Slurm's `scontrol release`); the others' starts overlap per
  // workflow.
  bool batches_start = false;
  // The most jobs one status_many call should get (0: any number). The step splits an
  // endpoint's RUNNING jobs into batches of this size and asks them concurrently (Oozie's job
  // list answers 50 ids a page: 10,000 jobs one page after another would take 200 round trips).
  std::size_t status_batch_limit = 0;
  // celos writes the done flag of the slot's output datasets on SUCCESS: the job cannot write
  // one itself (local commands, Slurm scripts). Oozie workflows usually write their own
  // _SUCCESS, and celos cannot know their output is whole.
  bool writes_done_flags = false;
  // The job's stdout and stderr are files in celos's jobs directory (read_job_output in
  // job_output.h); otherwise ExternalService::job_log asks the engine.
  bool keeps_job_output = false;
};

// Adding a virtual here? Forward it in ExternalServiceWrapper (external_service_wrapper.h, checked
// by model/wrapper_test.cc); a default implementation would otherwise hide the override.
class ExternalService {
 public:
  virtual ~ExternalService() = default;
  // Creates the job for a slot; returns its external id (e.g. an Oozie job id).
  [[nodiscard]] virtual Result<std::string> submit(const SlotId& slot) = 0;
  // submit() with the slot's SubmitContext; the step calls this one. The default ignores the
  // context (services that cannot use it); the command service overrides it.
  [[nodiscard]] virtual Result<std::string> submit_with(const SlotId& slot,
                                                        const SubmitContext& context);
  // Starts a submitted job.
  [[nodiscard]] virtual Result<void> start(const SlotId& slot, const std::string& external_id) = 0;
  // Where the job is.
  [[nodiscard]] virtual Result<ExternalStatus> status(const SlotId& slot,
                                                      const std::string& external_id) = 0;
  // Stops the job. Not an error if it has already ended.
  [[nodiscard]] virtual Result<void> kill(const SlotId& slot, const std::string& external_id) = 0;
  // `oozie http://host:11000/oozie`, `command "wc -l ..."`: for messages and the API.
  virtual std::string describe() const = 0;
  // The metric label of SPEC §16: "oozie", "command" or "slurm".
  virtual std::string_view kind() const = 0;
  // The remote endpoint the calls go to ("oozie http://host:11000/oozie", "slurm"), or "" for
  // none (local commands). Within a step, after the first timeout or connection error of an
  // endpoint its remaining calls fail at once; batch calls group jobs by endpoint.
  virtual std::string endpoint() const { return {}; }
  // The endpoint celos.serviceLimits names (celos/service_limits.h): "oozie <url>",
  // "slurm <partition>", "command <host>", "kubernetes <namespace>"; "" for none (no limits
  // apply). The default: endpoint().
  virtual std::string limit_endpoint() const { return endpoint(); }

  // One job of a batch call: the slot and its external id.
  struct Job {
    SlotId slot;
    std::string external_id;
  };
  // The status of many jobs of this service in as few calls as the protocol allows (Oozie's job
  // list, one squeue). The answer has an entry per external id: a job the batch call could not
  // answer for carries its own Error. The default asks status() once per job.
  [[nodiscard]] virtual std::map<std::string, Result<ExternalStatus>> status_many(
      const std::vector<Job>& jobs);
  // Starts many submitted jobs (Slurm: one `scontrol release`). Entries as for status_many().
  // The default calls start() once per job.
  [[nodiscard]] virtual std::map<std::string, Result<void>> start_many(
      const std::vector<Job>& jobs);
  // What the service can do, asked by the step and the API instead of its kind().
  virtual ServiceTraits traits() const { return {}; }
  // The tail (at most `tail` bytes) of a job's "stdout" or "stderr", for services whose output
  // the engine keeps rather than celos (traits().keeps_job_output is false), e.g. a pod's log.
  // The default: kNotFound, celos cannot read this service's output.
  [[nodiscard]] virtual Result<std::string> job_log(const SlotId& slot,
                                                    const std::string& external_id,
                                                    std::string_view stream, std::size_t tail);
};

using ExternalServicePtr = std::shared_ptr<ExternalService>;

}  // namespace celos
