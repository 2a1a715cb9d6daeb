#include "celos/schedule.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace celos {
namespace {

class CronSchedule final : public Schedule {
 public:
  explicit CronSchedule(CronExpression expression) : expression_(std::move(expression)) {}

  Result<std::vector<Time>> times(Time start, Time end, const ScheduleContext&) const override {
    return expression_.times(start, end);
  }
  std::string describe() const override {
    return fmt::format("cronSchedule({})", expression_.text());
  }

 private:
  CronExpression expression_;
};

class DependentSchedule final : public Schedule {
 public:
  explicit DependentSchedule(std::string workflow_id) : workflow_id_(std::move(workflow_id)) {}

  Result<std::vector<Time>> times(Time start, Time end,
                                  const ScheduleContext& context) const override {
    const auto& chain = context.chain;
    if (std::find(chain.begin(), chain.end(), workflow_id_) != chain.end()) {
      std::vector<std::string> loop = chain;
      loop.push_back(workflow_id_);
      return fail(fmt::format("dependent schedules form a cycle: {}", fmt::join(loop, " -> ")),
                  ErrorCode::kInvalid);
    }
    const Schedule* other = context.lookup ? context.lookup(workflow_id_) : nullptr;
    if (other == nullptr) {
      return fail(fmt::format("dependentSchedule: no workflow \"{}\"", workflow_id_),
                  ErrorCode::kNotFound);
    }
    ScheduleContext next = context;
    next.chain.push_back(workflow_id_);
    return other->times(start, end, next);
  }
  std::string describe() const override {
    return fmt::format("dependentSchedule({})", workflow_id_);
  }

 private:
  std::string workflow_id_;
};

std::shared_ptr<const Schedule> cron_or_die(std::string_view text) {
  auto expression = CronExpression::parse(text);
  if (!expression) throw std::logic_error(expression.error().message);  // a constant: a bug
  return make_cron_schedule(std::move(*expression));
}

}  // namespace

Result<void> check_schedule_density(const CronExpression& expression) {
  const std::uint64_t per_day = expression.max_firings_per_day();
  if (per_day <= kMaxSlotsPerDay) return {};
  return fail(fmt::format("cron expression \"{}\" fires up to {} times a day; celos allows at "
                          "most {} slots a day (one a minute), so that one workflow cannot fill "
                          "the 7-day window with {} slots",
                          expression.text(), per_day, kMaxSlotsPerDay, per_day * 7),
              ErrorCode::kInvalid);
}

std::shared_ptr<const Schedule> make_cron_schedule(CronExpression expression) {
  return std::make_shared<CronSchedule>(std::move(expression));
}

std::shared_ptr<const Schedule> make_hourly_schedule() {
  static const auto schedule = cron_or_die("0 0 * * * ?");
  return schedule;
}

std::shared_ptr<const Schedule> make_minutely_schedule() {
  static const auto schedule = cron_or_die("0 * * * * ?");
  return schedule;
}

std::shared_ptr<const Schedule> make_dependent_schedule(std::string workflow_id) {
  return std::make_shared<DependentSchedule>(std::move(workflow_id));
}

std::shared_ptr<const Schedule> make_hourly_schedule(const TimeZone& zone) {
  if (zone.is_utc()) return make_hourly_schedule();
  return make_cron_schedule(*CronExpression::parse("0 0 * * * ?"), zone);
}

std::shared_ptr<const Schedule> make_minutely_schedule(const TimeZone& zone) {
  if (zone.is_utc()) return make_minutely_schedule();
  return make_cron_schedule(*CronExpression::parse("0 * * * * ?"), zone);
}

Result<std::vector<ScheduledTime>> Schedule::explain(Time start, Time end,
                                                     const ScheduleContext& context) const {
  auto plain = times(start, end, context);
  if (!plain) return tl::unexpected(plain.error());
  std::vector<ScheduledTime> out;
  out.reserve(plain->size());
  for (Time t : *plain) out.push_back(ScheduledTime{t});
  return out;
}

const TimeZone& Schedule::time_zone() const {
  static const TimeZone utc = TimeZone::utc();
  return utc;
}

std::vector<std::string> Schedule::warnings(Time, Time) const { return {}; }

Result<std::vector<ScheduledTime>> preview_schedule(const Schedule& schedule, Time start, Time end,
                                                    const ScheduleContext& context,
                                                    std::size_t limit) {
  std::vector<ScheduledTime> out;
  for (Time from = start; from < end;) {
    const Time to = std::min<Time>(end, from + std::chrono::days(31));
    auto part = schedule.explain(from, to, context);
    if (!part) return tl::unexpected(part.error());
    out.insert(out.end(), part->begin(), part->end());
    if (out.size() > limit) {
      return fail(
          fmt::format("more than {} slots between {} and {} (already {} by {}): "
                      "narrow the range",
                      limit, format_time(start), format_time(end), out.size(), format_time(to)),
          ErrorCode::kInvalid);
    }
    from = to;
  }
  return out;
}

Result<bool> is_slot_time(const Schedule& schedule, Time t, const ScheduleContext& context) {
  auto times = schedule.times(t, t + std::chrono::seconds(1), context);
  if (!times) return tl::unexpected(times.error());
  return std::find(times->begin(), times->end(), t) != times->end();
}

}  // namespace celos
