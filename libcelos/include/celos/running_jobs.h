// Oozie's job notifications (issue 28): every Oozie job celos submits carries
// oozie.wf.workflow.notification.url, and Oozie calls
//
//   GET /api/v1/oozie-notification?jobId=J&status=S
//
// when the job changes state. The route needs no token (Oozie cannot send one); it answers 200
// {"ok": true} for the job of one of this server's RUNNING slots and 404 for anything else (both
// audited: the route mutates, so a standby forwards it to the leader). `status` is never
// trusted: the route only steps the slot's workflow at once (an event, celos/event_stepper.h),
// and the step asks Oozie for the job's status as it always does. A forged notification costs a
// partial step at most and changes nothing.
//
//   RunningJobs   the job -> slot index the route answers from: a SchedulerListener that
//                 follows slots into and out of RUNNING, seeded from the state database
#pragma once

#include <map>
#include <optional>
#include <string>

#include "celos/api.h"
#include "celos/mutex.h"
#include "celos/route_table.h"
#include "celos/scheduler.h"
#include "celos/slot.h"

namespace celos {

class RunningJobs final : public SchedulerListener {
 public:
  void on_slot_changes(const std::vector<SlotChange>& changes) override EXCLUDES(mutex_);
  // Adds the RUNNING slots with an external id stored in the 7 days before `now` (the step's
  // window) for every workflow of the scheduler's config. Call once the workflows loaded, on the
  // thread that serializes steps (jobs submitted before a restart are known again).
  void seed(Scheduler& scheduler, Time now) EXCLUDES(mutex_);
  // The slot whose RUNNING job is `external_id`, if known.
  std::optional<SlotId> find(const std::string& external_id) const EXCLUDES(mutex_);
  std::size_t size() const EXCLUDES(mutex_);

 private:
  mutable Mutex mutex_;
  std::map<std::string, SlotId> jobs_ GUARDED_BY(mutex_);
};

// Registers GET /api/v1/oozie-notification; `jobs` null (no --autoSchedule, or
// --oozie-notifications=false) answers every call 404 saying notifications are off.
void register_oozie_notification_route(RouteTable& table, const Api& api, const RunningJobs* jobs);

}  // namespace celos
