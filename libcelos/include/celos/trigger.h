// Triggers: is a slot's input ready? (SPEC §3)
//
// A trigger is an immutable tree of conditions. evaluate() returns the status tree that
// /trigger-status shows ({type, ready, description, subStatuses}); a failure of the outside
// world (HDFS unreachable) is an Error, and the slot keeps waiting.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "celos/error.h"
#include "celos/slot.h"
#include "celos/time.h"

namespace celos {

struct TriggerStatus {
  std::string type;  // AlwaysTrigger, AndTrigger, ..., HDFSCheckTrigger
  bool ready = false;
  std::string description;
  std::vector<TriggerStatus> sub_statuses;
};

// What a trigger may look at. The scheduler's implementation caches answers for one step, so
// that one path of one slot is checked once however many triggers refer to it.
class TriggerContext {
 public:
  virtual ~TriggerContext() = default;
  // The time of the step (not rounded).
  virtual Time now() const = 0;
  // Does `path` exist on the file system named by `fs_uri` (see FileSystemResolver)?
  [[nodiscard]] virtual Result<bool> path_exists(const std::string& fs_uri,
                                                 const std::string& path) = 0;
  // Is slot `time` of workflow `workflow_id` SUCCESS in the state database?
  [[nodiscard]] virtual Result<bool> slot_succeeded(const std::string& workflow_id, Time time) = 0;

  // Datasets (celos/dataset.h). The defaults answer an error: a context that serves datasets
  // (the scheduler's) overrides them.
  // The stored status of slot `time` of `workflow_id`; WAITING when nothing is stored.
  [[nodiscard]] virtual Result<SlotStatus> slot_status(const std::string& workflow_id, Time time);
  // The stored slots of `workflow_id` with start <= time < end, ascending by time.
  [[nodiscard]] virtual Result<std::vector<SlotState>> stored_slots(const std::string& workflow_id,
                                                                    Time start, Time end);
  // Was instance `time` of dataset `dataset_id` announced?
  [[nodiscard]] virtual Result<bool> instance_announced(const std::string& dataset_id, Time time);
  // The announced instances of a dataset with start <= time < end, ascending.
  [[nodiscard]] virtual Result<std::vector<Time>> announced_instances(const std::string& dataset_id,
                                                                      Time start, Time end);
};

class Trigger {
 public:
  virtual ~Trigger() = default;
  [[nodiscard]] virtual Result<TriggerStatus> evaluate(Time slot_time,
                                                       TriggerContext& context) const = 0;
};

using TriggerPtr = std::shared_ptr<const Trigger>;

TriggerPtr make_always_trigger();
// Ready when now > slot + seconds. "Delayed until <slot + seconds>" / "Ready since ...".
TriggerPtr make_delay_trigger(std::int64_t seconds);
// Evaluates `inner` for slot + seconds.
TriggerPtr make_offset_trigger(std::int64_t seconds, TriggerPtr inner);
// All ready (none = ready) / any ready (none = never ready) / not.
TriggerPtr make_and_trigger(std::vector<TriggerPtr> triggers);
TriggerPtr make_or_trigger(std::vector<TriggerPtr> triggers);
TriggerPtr make_not_trigger(TriggerPtr inner);
// Ready when slot `T` of `workflow_id` is SUCCESS.
TriggerPtr make_success_trigger(std::string workflow_id);
// Ready when `path` (time variables replaced with the slot's) exists on `fs_uri`
// ("" = the default file system). Description: "HDFS path <fs><path> is ready|is not ready".
TriggerPtr make_hdfs_check_trigger(std::string path, std::string fs_uri);

}  // namespace celos
