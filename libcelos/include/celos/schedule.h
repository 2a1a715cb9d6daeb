// Schedules: the times (slots) at which a workflow runs (SPEC §3).
//
// A schedule yields the slot times in [start, end). A dependent schedule uses another
// workflow's schedule, found through ScheduleContext; a chain of dependencies that loops back
// is an error naming the chain, never endless recursion. Schedules are immutable and safe to use
// from several threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "celos/cron.h"
#include "celos/error.h"
#include "celos/time.h"

namespace celos {

class Schedule;

struct ScheduleContext {
  // The schedule of another workflow, or nullptr if there is no such workflow.
  std::function<const Schedule*(std::string_view workflow_id)> lookup;
  // The workflow ids followed so far by dependent schedules (cycle detection).
  std::vector<std::string> chain;
};

class Schedule {
 public:
  virtual ~Schedule() = default;
  // Slot times in [start, end), ascending.
  [[nodiscard]] virtual Result<std::vector<Time>> times(Time start, Time end,
                                                        const ScheduleContext& context) const = 0;
  // `cronSchedule(0 0 * * * ?)`, `dependentSchedule(foo)`: for messages and the API.
  virtual std::string describe() const = 0;
};

std::shared_ptr<const Schedule> make_cron_schedule(CronExpression expression);

// A schedule denser than one slot a minute (a per-second cron: 604,800 slots in the 7-day
// window) would take the step's time and memory from every other workflow: such a cron
// expression is refused with a message saying how often it fires.
inline constexpr std::uint64_t kMaxSlotsPerDay = 1440;
[[nodiscard]] Result<void> check_schedule_density(const CronExpression& expression);
// cronSchedule("0 0 * * * ?") and cronSchedule("0 * * * * ?").
std::shared_ptr<const Schedule> make_hourly_schedule();
std::shared_ptr<const Schedule> make_minutely_schedule();
std::shared_ptr<const Schedule> make_dependent_schedule(std::string workflow_id);

// True if `t` is one of the schedule's slot times.
[[nodiscard]] Result<bool> is_slot_time(const Schedule& schedule, Time t,
                                        const ScheduleContext& context);

}  // namespace celos
