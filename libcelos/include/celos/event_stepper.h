// Event-driven steps (issue 28): with --autoSchedule, besides the periodic step (the safety
// net), celos-server steps exactly the workflows an event may have made ready, shortly after
// the event.
//
//   post()            an event and its workflows (announcement: the dataset's consumers; a job's
//                     end: its workflow; operator: the workflow acted on). Never blocks.
//   on_slot_changes   as a SchedulerListener: a slot that changed state wakes the workflows whose
//                     triggers read that workflow's slots (celos/workflow_dependents.h), and a
//                     submission of a workflow that an event stepped is measured
//                     (celos_event_to_submit_seconds{event}).
//
// Events that arrive together are coalesced: at most one partial step is queued on the
// SerialWorker at a time, and it steps the union of the workflows of every event that arrived
// before it ran. With a `settle` time, a partial step is queued only once no event came for
// that long (or the oldest waited `max_delay`): during a burst the woken workflows are stepped
// in a few large steps, each taking the events that came while the one before ran. So partial
// steps are serialized with the periodic step and every mutation (the worker runs one job at a
// time, in order), a burst of events costs a few partial steps, and an event storm cannot
// starve the periodic step, reads (which never touch the worker) or mutations (queued behind at
// most one partial step each). Dataset announcements themselves do not wait for the steps: they
// run on a worker of their own (Route::group_handler). The step runs at the wall clock's now
// through Api::step, which skips it on a cluster standby: only the leader steps (events arrive
// there because standbys forward mutations).
//
// A lost event (a crash, a full queue) costs the periodic step's latency, never a submission:
// the partial step is an ordinary step of fewer workflows (SPEC §16 holds for it as for any).
// Thread-safe; the worker and `api` must outlive it, and the worker must be stopped before it is
// destroyed.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "celos/api.h"
#include "celos/api_serving.h"
#include "celos/clock.h"
#include "celos/event_source.h"
#include "celos/metrics.h"
#include "celos/mutex.h"
#include "celos/request_pool.h"
#include "celos/scheduler.h"
#include "celos/workflow_dependents.h"

namespace celos {

struct EventStepperOptions {
  // The current workflows, for the dependents of slot changes (the scheduler's config()).
  std::function<WorkflowConfigPtr()> config;
  Metrics* metrics = nullptr;  // celos_event_to_submit_seconds; null = not measured
  Clock* clock = &system_clock();
  // Is this file system URI ("" = the default) the local one? File events step the workflows
  // that check paths on it. Empty = only "file:" URIs.
  std::function<bool(std::string_view uri)> is_local = {};
  // Quiet time before a partial step is queued; zero queues it at once (as unit tests expect).
  std::chrono::milliseconds settle{0};
  // The longest an event waits for a quiet moment before its partial step is queued anyway.
  std::chrono::milliseconds max_delay{500};
};

class EventStepper final : public SchedulerListener {
 public:
  EventStepper(const Api& api, SerialWorker& worker, EventStepperOptions options);
  EventStepper(const EventStepper&) = delete;
  EventStepper& operator=(const EventStepper&) = delete;

  // Queues a partial step of `workflows` (unless one is queued already, which takes them too).
  void post(EventSource source, const std::vector<std::string>& workflows) EXCLUDES(mutex_);
  // A file appeared under a watched local directory: the workflows that check local paths.
  void post_file_event() EXCLUDES(mutex_);
  // No partial step begins after this (one running finishes on the worker). Idempotent.
  void stop() EXCLUDES(mutex_);
  // Partial steps run so far.
  int partial_steps() const EXCLUDES(mutex_);

  void on_slot_changes(const std::vector<SlotChange>& changes) override EXCLUDES(mutex_);

  // The first event that asked for a workflow since its last partial step.
  struct Pending {
    EventSource source;
    Clock::Monotonic at;
  };
  using Batch = std::map<std::string, Pending>;

 private:
  void merge(Batch events) EXCLUDES(mutex_);
  // On the timer: queues the partial step once the events settled, or waits on.
  void settled() EXCLUDES(mutex_);
  void queue_batch() EXCLUDES(mutex_);
  void run_batch() EXCLUDES(mutex_);
  const WorkflowDependents& dependents() REQUIRES(mutex_);

  const Api& api_;
  SerialWorker& worker_;
  EventStepperOptions options_;
  mutable Mutex mutex_;
  Batch pending_ GUARDED_BY(mutex_);
  // The workflows of the partial step running now, with their events (submissions are timed
  // against them, and slot changes they cause inherit them).
  Batch in_flight_ GUARDED_BY(mutex_);
  bool queued_ GUARDED_BY(mutex_) = false;
  bool waiting_to_settle_ GUARDED_BY(mutex_) = false;
  Clock::Monotonic last_event_ GUARDED_BY(mutex_){};
  Clock::Monotonic first_pending_ GUARDED_BY(mutex_){};  // when pending_ last became non-empty
  bool stopping_ GUARDED_BY(mutex_) = false;
  int partial_steps_ GUARDED_BY(mutex_) = 0;
  WorkflowConfigPtr indexed_ GUARDED_BY(mutex_);
  WorkflowDependents index_ GUARDED_BY(mutex_);
  // Only with a settle time; last, so that it stops (and drops its callbacks) first.
  std::unique_ptr<DeadlineTimer> timer_;
};

}  // namespace celos
