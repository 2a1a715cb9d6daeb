// One run of the scheduler step (step.h's run_step), its phases as methods: step.cc runs them
// in order and holds phases 1 and 2 (load and submit, record RUNNING durably, start, as a
// pipeline) and the writes; step_advance.cc holds phase 3 (statuses and triggers asked
// concurrently, then each slot moves on; long-running slots kept in view). Internal to model/.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/step.h"
#include "model/step_context.h"
#include "model/step_run.h"

namespace celos::detail {

class Step {
 public:
  Step(const WorkflowConfig& config, Time now, StepEnvironment env, StepReport& report)
      : config_(config),
        now_(now),
        env_(std::move(env)),
        report_(report),
        triggers_(now, env_.db, env_.file_systems, env_.data_checks),
        fence_(env_.guard ? *env_.guard : always_current_lease_guard()),
        datasets_(config, env_.db, env_.file_systems, now, fence_),
        gate_(env_.clock),
        started_(env_.clock.monotonic()) {}

  void run(const std::optional<std::set<std::string>>& ids);

 private:
  template <class Phase>
  void timed(const char* name, Phase&& phase) {
    const auto started = env_.clock.monotonic();
    phase();
    report_.phases.emplace_back(name, std::chrono::duration_cast<std::chrono::milliseconds>(
                                          env_.clock.monotonic() - started));
  }

  // ---- phases 1 and 2, the writes, the report (step.cc) ----

  // Phases 1 and 2 as a pipeline over parts of the workflows: in round k the executor submits
  // the picks of part k, writes the RUNNING records of part k-1 (one task) and starts the jobs
  // of part k-2, so that the disk's work overlaps the calls. Per workflow the order of SPEC §10
  // and §16 stays: submitted, then recorded durably, then started. Services that start many
  // jobs in one call (Slurm: one `scontrol release` a step) start after every part is recorded.
  // The phases load+submit, record and start report how long each stage was busy.
  void submit_record_start();

  // One bulk read of what the per-workflow tasks will read, where the backend can (PostgreSQL's
  // leader cache). A failure costs only speed: the tasks' reads ask again.
  void prefetch();

  // Phase 1, one task per workflow: load its slots (unless limited(): loaded before), then
  // submit the strategy's picks one after another in pick order, stopping at the first failure
  // (SPEC §16).
  void load_and_submit(WorkflowRun& run);
  // Loads the workflow's window and leaves the strategy's picks in run.picks.
  void load_and_pick(WorkflowRun& run);

  // The RUNNING records of runs_[from, to), durably (one task of the pipeline at a time).
  std::vector<SlotChange> record_running(std::size_t from, std::size_t to);

  // Writes the changes of `writers` as one group (one sync); when that fails, workflow by
  // workflow, so that one workflow's unwritable directory is an error of that workflow alone.
  // Writers whose changes could not be written lose them (and are told so in their errors).
  // Returns the changes written, for the listeners (notified on the step's thread).
  template <class ChangesOf>
  std::vector<SlotChange> write_isolated(std::vector<WorkflowRun*>& writers, ChangesOf changes_of);

  // Starts the jobs `list_of` names (restarts of jobs never started).
  template <class ListOf>
  void start_jobs(ListOf list_of);

  // The tasks that start the jobs `list_of` names in runs_[from, to) of the services that
  // batch starts or not (`batching`): one start_many per endpoint for those that do (Slurm: one
  // `scontrol release`), one per workflow for the others. `groups` outlives the tasks.
  template <class ListOf>
  void add_start_tasks(std::size_t from, std::size_t to, ListOf list_of, bool batching,
                       std::map<std::string, JobGroup>& groups,
                       std::vector<std::function<void()>>& tasks, StageClock& clock);

  void write_changes();
  void finish_report();

  // ---- phase 3 (step_advance.cc) ----

  // Phase 3: the status of every RUNNING slot and the trigger of every WAITING slot, asked
  // concurrently; then each slot loaded in phase 1 moves on.
  void advance();

  // The WAITING slots to evaluate, in chunks (one task each); a slot whose data check backs
  // off (DataCheckMemory) is not evaluated and counts as not ready.
  using Chunk = std::pair<WorkflowRun*, std::vector<std::size_t>>;
  void add_waiting(WorkflowRun& run, const std::vector<std::size_t>& waiting,
                   std::vector<Chunk>& chunks);
  // Before the chunks are evaluated: which paths they will ask (model/data_checks.h).
  void probe_paths(const std::vector<Chunk>& chunks);
  // Is one of the file systems of these paths one that prefers_listing()?
  bool any_listing(const std::vector<PathKey>& asked);
  void evaluate(const Chunk& chunk);
  // Tells the back-off what became of each WAITING slot's check.
  void remember_checks();

  void ask_status(JobGroup& group);
  void advance_slots(WorkflowRun& run);
  std::optional<SlotState> advance_waiting(WorkflowRun& run, const SlotState& slot,
                                           const Result<bool>& ready);
  std::optional<SlotState> advance_running(WorkflowRun& run, const SlotState& slot,
                                           const std::optional<Result<ExternalStatus>>& status);

  // Keeps a long-running slot in view after it leaves the window (see kFollowMargin): the
  // marker is written by mark_followed(), for all workflows at once, while advance() asks for
  // the statuses (whatever they answer: a slot that ends now keeps a marker that expires).
  void follow(WorkflowRun& run, const SlotState& slot);

  // One durable group for the step's new markers (a step of 10,000 workflows whose oldest slot
  // runs writes 10,000 of them); if the group fails, each workflow's own, as write_isolated.
  // Runs as a task beside advance()'s calls, which touch other members of the runs.
  void mark_followed();

  bool backing_off(const SlotState& s) const { return s.retry_at && now_ < *s.retry_at; }

  // ---- deadlines (step_deadline.cc) ----

  // Each slot's deadline at the step's `now`, after phase 3: a slot with a deadline that is not
  // stored yet is stored with it (so that edits never move it), a transition to AT_RISK or
  // MISSED is stored in the same write as the slot's change (the notification goes out once,
  // after it), and onMiss "kill" kills a missed slot.
  void check_deadlines();
  using Kills = std::vector<std::pair<WorkflowRun*, std::size_t>>;  // run, index of its change
  void check_deadlines(WorkflowRun& run, Kills& kills);
  // Applies one slot's deadline verdict: a change of its own, or on top of the step's change.
  // `before`: the slot's stored state (null: not stored); `change`: the step's change of it.
  void record_deadline(WorkflowRun& run, const SlotState& latest, const SlotState* before,
                       SlotChange* change, Kills& kills);
  void kill_missed(Kills& kills);
  void kill_missed(WorkflowRun& run, SlotChange& change);

  // ---- service limits (step_limits.cc, celos/service_limits.h) ----

  // Whether celos.serviceLimits applies in this step: then every workflow is loaded and picked
  // first (load_all), admit_limited() cuts the picks, and the pipeline only submits.
  bool limited() const { return env_.limiter != nullptr && !config_.service_limits.empty(); }
  void load_all();
  // Cuts each workflow's picks to what its endpoint's limits let through, live picks of all its
  // workflows first; reserves the tokens; counts what is held back in the report.
  void admit_limited();
  // The step's clock now: its `now` plus the time the step has taken so far.
  Time step_clock() const {
    return now_ +
           std::chrono::duration_cast<std::chrono::milliseconds>(env_.clock.monotonic() - started_);
  }
  // A submission of the run was made: one of its reserved tokens is spent now, after the
  // call, so that it comes back a period after the service saw the call whatever it took.
  void spend_token(WorkflowRun& run);
  // The run's tokens not spent go back.
  void release_tokens(WorkflowRun& run);
  // At the end: each loaded workflow's RUNNING slots, for the maxConcurrent of later steps.
  void record_running_book(const std::map<std::string, int>& running);

  // ---- shared ----

  static std::vector<SlotState>& running_of(WorkflowRun& run) { return run.running; }
  static std::vector<SlotState>& restart_of(WorkflowRun& run) { return run.restart; }

  void notify(const std::vector<SlotChange>& committed) {
    if (!committed.empty() && env_.committed) env_.committed(committed);
  }

  // Each workflow is its own failure domain: an error or even a bug in one never stops the
  // others (SPEC §4 step 2).
  template <class Body>
  static void isolated(WorkflowRun& run, Body&& body) {
    try {
      body();
    } catch (const std::exception& e) {
      run.active = false;
      run.error(fmt::format("step failed: {}", e.what()));
    }
  }

  // One external call through the step's gate; a bug (an exception) in a service becomes an
  // error of that call, never of the executor's thread.
  template <class Call>
  auto call(const ExternalService& service, const std::string& what, Call&& c) -> decltype(c()) {
    return gate_.run(service.endpoint(), what, [&]() -> decltype(c()) {
      try {
        return c();
      } catch (const std::exception& e) {
        return tl::unexpected(Error{fmt::format("{} failed: {}", what, e.what())});
      }
    });
  }

  const WorkflowConfig& config_;
  Time now_;
  StepEnvironment env_;
  StepReport& report_;
  StepTriggerContext triggers_;
  SideEffectFence fence_;
  DatasetStep datasets_;
  CallGate gate_;
  Clock::Monotonic started_;
  std::vector<WorkflowRun> runs_;
  std::chrono::milliseconds follow_busy_{0};
  int checks_deferred_ = 0;  // remote paths not asked: their slots back off
};

}  // namespace celos::detail
