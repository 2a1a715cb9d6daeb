// Schedules: the times (slots) at which a workflow runs (SPEC §3).
//
// A schedule yields the slot times in [start, end). A dependent schedule uses another
// workflow's schedule, found through ScheduleContext; a chain of dependencies that loops back
// is an error naming the chain, never endless recursion. Schedules are immutable and safe to use
// from several threads.
//
// Schedules in local time (issue 26, docs/time-zones.md): a cron, hourly or minutely schedule
// may read its expression in an IANA zone. Slot identity stays the UTC instant. An *interval*
// expression (its hour field has `*` or `/`) fires at every instant whose local time matches,
// with the offset in force then: nothing in a gap, both passes of a repeated hour. A *fixed-time*
// expression (hour field a number, list or range) maps each local time through a DstRule.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "celos/cron.h"
#include "celos/error.h"
#include "celos/time.h"
#include "celos/time_zone.h"

namespace celos {

class Schedule;

struct ScheduleContext {
  // The schedule of another workflow, or nullptr if there is no such workflow.
  std::function<const Schedule*(std::string_view workflow_id)> lookup;
  // The workflow ids followed so far by dependent schedules (cycle detection).
  std::vector<std::string> chain;
};

// What a fixed-time schedule does with a local time that does not exist (gap) or that happens
// twice (overlap). `explicit_rule` is false when the defaults apply (the load-time lint warns
// then).
enum class DstGap { kShift, kSkip };
enum class DstOverlap { kFirst, kSecond, kBoth };
struct DstRule {
  DstGap gap = DstGap::kShift;
  DstOverlap overlap = DstOverlap::kFirst;
  bool explicit_rule = false;
};
// "shift" / "skip" and "first" / "second" / "both"; anything else is an error naming the value.
[[nodiscard]] Result<DstGap> parse_dst_gap(std::string_view text);
[[nodiscard]] Result<DstOverlap> parse_dst_overlap(std::string_view text);

// The rule that produced or moved a slot time (schedule-preview's `rule`): none for ordinary
// times and for every time of an interval schedule.
enum class DstApplied { kNone, kShift, kFirst, kSecond, kBoth };
std::string_view to_string(DstApplied applied);  // "", "shift", "first", "second", "both"
struct ScheduledTime {
  Time time;
  DstApplied rule = DstApplied::kNone;
  friend bool operator==(const ScheduledTime&, const ScheduledTime&) = default;
};

class Schedule {
 public:
  virtual ~Schedule() = default;
  // Slot times in [start, end), ascending.
  [[nodiscard]] virtual Result<std::vector<Time>> times(Time start, Time end,
                                                        const ScheduleContext& context) const = 0;
  // `cronSchedule(0 0 * * * ?)`, `dependentSchedule(foo)`: for messages and the API.
  virtual std::string describe() const = 0;
  // The slot times with the rule that produced or moved each (the default: times(), no rule).
  [[nodiscard]] virtual Result<std::vector<ScheduledTime>> explain(
      Time start, Time end, const ScheduleContext& context) const;
  // The zone its times are read in: UTC unless made with one.
  virtual const TimeZone& time_zone() const;
  // Load-time lint: fixed local times that fall inside a transition of the zone in [start, end)
  // while no `dst` rule was given, one message each (empty for UTC and interval schedules).
  virtual std::vector<std::string> warnings(Time start, Time end) const;
};

std::shared_ptr<const Schedule> make_cron_schedule(CronExpression expression);
// The expression read in `zone` (zoned_schedule.cc); UTC gives the plain cron schedule.
std::shared_ptr<const Schedule> make_cron_schedule(CronExpression expression, TimeZone zone,
                                                   DstRule rule = {});
// True if the expression's hour field has no `*` and no `/` (a fixed-time expression).
bool is_fixed_time(const CronExpression& expression);

// A schedule denser than one slot a minute (a per-second cron: 604,800 slots in the 7-day
// window) would take the step's time and memory from every other workflow: such a cron
// expression is refused with a message saying how often it fires.
inline constexpr std::uint64_t kMaxSlotsPerDay = 1440;
[[nodiscard]] Result<void> check_schedule_density(const CronExpression& expression);
// cronSchedule("0 0 * * * ?") and cronSchedule("0 * * * * ?").
std::shared_ptr<const Schedule> make_hourly_schedule();
std::shared_ptr<const Schedule> make_minutely_schedule();
// The same read in `zone` (interval schedules: only zones with :30 or :45 offsets move them).
std::shared_ptr<const Schedule> make_hourly_schedule(const TimeZone& zone);
std::shared_ptr<const Schedule> make_minutely_schedule(const TimeZone& zone);
std::shared_ptr<const Schedule> make_dependent_schedule(std::string workflow_id);

// The slot times of [start, end) with their rules, for GET /api/v1/schedule-preview: computed a
// month at a time, so that a range holding more than `limit` slots is refused (kInvalid, saying
// how many were found) after little work, however long the range.
inline constexpr std::size_t kMaxPreviewSlots = 10000;
[[nodiscard]] Result<std::vector<ScheduledTime>> preview_schedule(
    const Schedule& schedule, Time start, Time end, const ScheduleContext& context,
    std::size_t limit = kMaxPreviewSlots);

// The local time parts of slot `t` in `zone`, the variables a zoned workflow's jobs get at submit
// time (SubmitContext::variables): local.year local.month local.day local.hour local.minute
// local.second (zero-padded as ${year}...), local.offset ("+02:00") and local.timeZone.
std::map<std::string, std::string> local_time_variables(const TimeZone& zone, Time t);

// True if `t` is one of the schedule's slot times.
[[nodiscard]] Result<bool> is_slot_time(const Schedule& schedule, Time t,
                                        const ScheduleContext& context);

}  // namespace celos
