// The scheduler: the step of SPEC §4 and the operations of the API (rerun, kill, pause, and the
// reads behind /workflow-slots and /trigger-status).
//
// Threading: step(), reload(), rerun(), kill() and pause() mutate and must be serialized by the
// caller (celos-server runs them on one strand). config(), workflow_slots(), slot_state() and
// trigger_status() may run concurrently with one of them: they read the current immutable
// WorkflowConfig snapshot and the state database, whose files are replaced atomically.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "celos/backfill.h"
#include "celos/clock.h"
#include "celos/deadline.h"
#include "celos/error.h"
#include "celos/executor.h"
#include "celos/file_system.h"
#include "celos/lease_guard.h"
#include "celos/mutex.h"
#include "celos/range_ops.h"
#include "celos/slot.h"
#include "celos/state_db.h"
#include "celos/time.h"
#include "celos/trigger.h"
#include "celos/workflow.h"

namespace celos {

class HistoryPredictor;  // celos/deadline_predictor.h
namespace detail {
class DataCheckMemory;  // model/data_check_memory.h
}

// The back-off of data checks (issue 28): a WAITING slot whose trigger found its data missing on
// a file system where each check is a round trip (one that prefers_listing(): WebHDFS, SFTP; not
// the local disk) is checked again after one step, then after 2, 4, 8, ... steps, at most `max`
// apart. A step of chosen workflows (celos-server's event-driven steps: an
// announcement, a rerun, a file, a job's end) and a rerun make their slots' checks due at once.
// Kept in memory only: after a restart every slot is checked at the first step.
struct DataCheckBackoff {
  std::chrono::seconds step{0};  // one step (celos-server: --autoSchedule); 0: no back-off
  std::chrono::seconds max = std::chrono::minutes(10);
};

// The number of SlotStatus values.
inline constexpr int kSlotStatusCount = 7;

// How far back the step looks (SPEC §4): 7 days.
inline constexpr std::chrono::hours kSlidingWindow{24 * 7};

struct StepReport {
  Time now{};
  int workflows = 0;                // workflows stepped (not paused, not filtered out)
  int changed = 0;                  // slot states written
  int submitted = 0;                // slots submitted to their external service
  std::vector<std::string> errors;  // one line per workflow/slot that failed (also logged)
  std::chrono::milliseconds duration{0};
  int external_calls = 0;        // submit, start, status and kill calls made (batch = 1)
  int external_call_errors = 0;  // of which failed
  int data_checks = 0;           // distinct paths checked by triggers
  // Issue 28: the file-system calls those checks took (one listing answers every waiting path
  // of a directory), and the checks of slots that were backing off (not asked this step).
  int data_check_calls = 0;
  int data_checks_deferred = 0;
  std::string slowest_call;  // "12 ms (Oozie status of ...)", "" when none
  // The slots the step looked at, by their state at its end (the window, reruns, RUNNING).
  std::map<SlotStatus, int> slot_counts;
  // The maintenance mode the step ran in (SPEC §13): under drain nothing is submitted, under
  // pause the step does nothing.
  MaintenanceMode maintenance = MaintenanceMode::kOff;
  // Deadlines (celos/deadline.h): the slots the step found AT_RISK, and those it found MISSED
  // (newly: each miss is counted once).
  int deadlines_at_risk = 0;
  int deadlines_missed = 0;
  // Picks that celos.serviceLimits held back (they stay READY), by endpoint and limit.
  std::map<std::pair<std::string, ServiceLimit>, int> limit_deferred = {};
  // Backfills (celos/backfill.h): every plan as of this step's admission (none under pause or
  // without the lease), and the slots admitted.
  std::vector<BackfillPlan> backfills = {};
  int backfill_admitted = 0;
  // Where the step's time went, phase by phase in order ("load+submit", "record", "start",
  // "advance", "follow", "restart", "write"), for the summary log line.
  std::vector<std::pair<std::string, std::chrono::milliseconds>> phases;
};

// One stored change of a slot's state, as listeners see it after the write is durable.
struct SlotChange {
  std::optional<SlotState> from;  // nothing when no state was stored before
  SlotState to;
  Time at{};       // the step's `now`, or the time of the API request
  std::string by;  // "step", or "api:<token name or anonymous>@<client address>"
  // Why the slot's deadline state changed (celos/deadline.h), when it did; not stored.
  std::string deadline_reason = {};
};

// Learns about committed changes (metrics, slot history, notifications, lineage), as Ninja's
// Builder reports to Status. Called on the thread that committed, after the write is durable;
// implementations must be quick (queue slow work) and must not call back into the scheduler.
class SchedulerListener {
 public:
  virtual ~SchedulerListener() = default;
  virtual void on_slot_changes(const std::vector<SlotChange>& changes) = 0;
  // At the end of every step, with its summary.
  virtual void on_step(const StepReport& /*report*/) {}
};

// What is written with the slot changes that cause it (the OpenLineage spool, celos/lineage.h):
// the step, kill and range kill call prepare() with their changes before they store them,
// sync() while the database stores them (StateDatabase::put_slots_after: before any of the
// states is visible) and settle() after, so what a change emits is durable before the change
// is, and never outlives a write that failed. prepare() must be quick (an append that need not
// be durable yet: sync() makes it so, at best riding on the database's own sync of the same
// disk); an error of either stops the write. Called on the thread that writes; writes are
// serialized (celos/state_db.h: one writer).
class SlotOutbox {
 public:
  virtual ~SlotOutbox() = default;
  // Returns a ticket for sync() and settle().
  [[nodiscard]] virtual Result<std::uint64_t> prepare(const std::vector<SlotChange>& changes) = 0;
  // Makes what prepare() wrote for `ticket` durable.
  [[nodiscard]] virtual Result<void> sync(std::uint64_t ticket) = 0;
  // `written`: whether put_slots succeeded. When it failed some of the states may be stored all
  // the same: the outbox asks the database which.
  virtual void settle(std::uint64_t ticket, bool written) = 0;
};

// Stores the changes' new states, through `outbox` when there is one (prepare, put_slots_after
// with sync, settle).
[[nodiscard]] Result<void> put_changes(StateDatabase& db, SlotOutbox* outbox,
                                       const std::vector<SlotChange>& changes);

class Scheduler {
 public:
  // All three must outlive the scheduler.
  Scheduler(WorkflowSource& source, StateDatabase& db, FileSystemResolver& file_systems);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // One step at `now` for all workflows, or only those in `ids`. `cause`, when not empty, names
  // a partial step's reason in the step's log lines ("after announcement of clicks", issue 28).
  StepReport step(Time now, const std::optional<std::set<std::string>>& ids = std::nullopt,
                  std::string_view cause = {});

  // Adds a listener (not owned; must outlive the scheduler). Not thread-safe: call before the
  // first step.
  void add_listener(SchedulerListener& listener);
  // The executor of the step's external calls (not owned; must outlive the scheduler). The
  // default runs them one at a time on the step's thread. Call before the first step.
  void set_executor(Executor& executor);
  // The fence of the side effects of steps, reruns and kills (celos/lease_guard.h: a cluster
  // node's lease; not owned, must outlive the scheduler). Default: always current. Call before
  // the first step.
  void set_lease_guard(LeaseGuard& guard) { guard_ = &guard; }
  // The clock that measures steps and their phases (not owned; must outlive the scheduler).
  // Default: system_clock(). The step's `now` is always given. Call before the first step.
  void set_clock(Clock& clock) { clock_ = &clock; }
  // What predicts when slots finish (celos/deadline.h; not owned, must outlive the scheduler).
  // Default: the scheduler's own, which learns from the history of the changes it commits
  // (celos/deadline_predictor.h). Call before the first step.
  void set_deadline_predictor(const DeadlinePredictor& predictor) { predictor_ = &predictor; }
  const DeadlinePredictor* deadline_predictor() const { return predictor_; }
  // The outbox of slot writes (lineage; not owned, must outlive the scheduler). Default: none.
  // Call before the first step.
  void set_outbox(SlotOutbox& outbox) { outbox_ = &outbox; }

  // Turns on the back-off of data checks (see DataCheckBackoff; off by default: every step
  // checks every WAITING slot). Call before the first step.
  void set_data_check_backoff(DataCheckBackoff backoff);
  // While a WAITING slot's data check backs off (it is not due at `now`): when it is checked
  // next (/trigger-status's "nextCheckAt"). Thread-safe.
  [[nodiscard]] std::optional<Time> next_data_check(const SlotId& slot, Time now) const;

  // Re-evaluates the workflow files now (/clear-cache).
  WorkflowConfigPtr reload();
  // Picks up the workflow files that changed since the last load (a cluster's standbys, which
  // never step, call it every few seconds: SPEC §16).
  WorkflowConfigPtr refresh();

  // The workflows of the last load (loads once if nothing was loaded yet).
  WorkflowConfigPtr config();

  // SPEC §4 rerun: from a final state (or no state) to WAITING with a rerun marker.
  // kNotFound for an unknown workflow or a time that is not one of its slots; kInvalid for an
  // illegal transition. Returns the new state. `by` is who asked (slot history, SlotChange::by).
  [[nodiscard]] Result<SlotState> rerun(const std::string& workflow, Time slot_time, Time now,
                                        const std::string& by = "api");
  // SPEC §4 kill: from WAITING, READY, RUNNING (or no state); kills the external job first.
  // `now` and `by`: when and by whom (slot history).
  [[nodiscard]] Result<SlotState> kill(const std::string& workflow, Time slot_time,
                                       Time now = Time{}, const std::string& by = "api");
  // Range rerun/kill (celos/range_ops.h; defined in range_ops.cc). kNotFound for an unknown
  // workflow, kInvalid for an inverted or too large range. Changes are written as one group.
  [[nodiscard]] Result<RangeResult> range(RangeAction action, const RangeRequest& request);
  [[nodiscard]] Result<void> pause(const std::string& workflow, bool paused);
  [[nodiscard]] Result<bool> is_paused(const std::string& workflow);

  // The workflow's slots in [max(start, startTime), end), newest first; slots with nothing stored
  // are WAITING. kNotFound for an unknown workflow.
  [[nodiscard]] Result<std::vector<SlotState>> workflow_slots(const std::string& workflow,
                                                              Time start, Time end);
  // The stored state of one slot (kNotFound if none or unknown workflow).
  [[nodiscard]] Result<SlotState> slot_state(const std::string& workflow, Time slot_time);
  // The recorded changes of one slot, oldest first (slot_history.cc). kNotFound for an unknown
  // workflow or a time that is not one of its slots.
  [[nodiscard]] Result<std::vector<SlotHistoryEntry>> slot_history(const std::string& workflow,
                                                                   Time slot_time);
  // Deadlines (deadline_ops.cc, celos/deadline.h). Moves one slot's deadline (POST
  // /api/v1/deadline): stored with the slot (a slot with nothing stored is stored WAITING), its
  // deadline state forgotten so that the next step judges it against the new deadline.
  // kNotFound as rerun.
  [[nodiscard]] Result<SlotState> set_deadline(const std::string& workflow, Time slot_time,
                                               Time deadline, Time now,
                                               const std::string& by = "api");
  // The slots whose deadline falls in [start, end) (GET /api/v1/deadlines), in `states` (empty:
  // all), ordered by deadline. kInvalid for an inverted range or one longer than 7 days.
  [[nodiscard]] Result<std::vector<DeadlineView>> deadlines(Time start, Time end, Time now,
                                                            const std::set<DeadlineState>& states);
  // One slot's deadline at `now` (/trigger-status); nothing when it has none.
  [[nodiscard]] Result<std::optional<DeadlineView>> deadline_view(const std::string& workflow,
                                                                  Time slot_time, Time now);

  // The trigger's status tree for a slot, evaluated at `now`.
  [[nodiscard]] Result<TriggerStatus> trigger_status(const std::string& workflow, Time slot_time,
                                                     Time now);

  // Tells the listeners about changes written elsewhere (a backfill's cancel, by the API).
  void announce(const std::vector<SlotChange>& changes) { notify(changes); }

  // Datasets (web/datasets_api.cc): announcements and reads go to these directly.
  StateDatabase& state_database() { return db_; }
  FileSystemResolver& file_systems() { return file_systems_; }

 private:
  [[nodiscard]] Result<const Workflow*> find_slot(const WorkflowConfig& config,
                                                  const std::string& workflow, Time slot_time);
  void set_config(WorkflowConfigPtr config);
  void notify(const std::vector<SlotChange>& changes);
  // Backfill admission before a step (celos/backfill.h); nothing under maintenance.
  BackfillPump admit_backfills(const WorkflowConfig& config, Time now, MaintenanceMode mode);
  // The ids of the plans in state running, whose admitted slots a step submits.
  std::set<std::string> running_backfills(const WorkflowConfig& config);
  // The stored maintenance mode (SPEC §13); pause, with an error in the report, if unreadable.
  MaintenanceMode maintenance_mode(StepReport& report);
  // range_ops.cc: the writes of a real range rerun / kill.
  [[nodiscard]] Result<void> commit_range_rerun(const std::vector<SlotChange>& changes, Time now);
  [[nodiscard]] Result<void> commit_range_kill(const Workflow& wf, std::vector<SlotChange>& changes,
                                               RangeResult& result);

  WorkflowSource& source_;
  StateDatabase& db_;
  FileSystemResolver& file_systems_;
  Mutex config_mutex_;
  WorkflowConfigPtr config_ GUARDED_BY(config_mutex_);
  std::vector<SchedulerListener*> listeners_;
  std::unique_ptr<Executor> inline_executor_;
  Executor* executor_;
  LeaseGuard* guard_ = &always_current_lease_guard();
  Clock* clock_ = &system_clock();
  std::unique_ptr<HistoryPredictor> own_predictor_;  // a listener too
  // celos.serviceLimits: shared by all steps, full and partial (celos/service_limits.h).
  ServiceLimiter limiter_;
  const DeadlinePredictor* predictor_ = nullptr;
  // What data checks remember between steps (back-off, directories too big to list).
  std::unique_ptr<detail::DataCheckMemory> data_checks_;
  SlotOutbox* outbox_ = nullptr;
};

}  // namespace celos
