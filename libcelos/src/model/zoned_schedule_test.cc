// Cron schedules read in a time zone (zoned_schedule.cc, issue 26): the fixed-time rule, the
// interval rule, and the lint.
#include <chrono>

#include <catch2/catch.hpp>

#include "celos/schedule.h"
#include "testing/scheduler_world.h"

namespace celos {
namespace {

using std::chrono::hours;

std::shared_ptr<const Schedule> zoned(std::string_view expr, std::string_view zone,
                                      DstRule rule = {}) {
  auto e = CronExpression::parse(expr);
  REQUIRE(e);
  auto z = TimeZone::load(zone);
  REQUIRE(z);
  return make_cron_schedule(*e, *z, rule);
}

std::vector<Time> zoned_times(const Schedule& s, Time start, Time end) {
  auto t = s.times(start, end, ScheduleContext{});
  REQUIRE(t);
  return *t;
}

std::vector<ScheduledTime> explain(const Schedule& s, Time start, Time end) {
  auto t = s.explain(start, end, ScheduleContext{});
  REQUIRE(t);
  return *t;
}

// The whole day of `d` in Paris local time, as UTC bounds wide enough for either offset.
std::vector<ScheduledTime> paris_day(std::string_view expr, int month, int day, DstRule r = {}) {
  return explain(*zoned(expr, "Europe/Paris", r), make_time(2026, month, day - 1, 22),
                 make_time(2026, month, day, 22));
}

TEST_CASE("a daily 06:00 Paris schedule runs at 04:00Z in summer and 05:00Z in winter") {
  const auto s = zoned("0 0 6 * * ?", "Europe/Paris");
  CHECK(zoned_times(*s, make_time(2026, 7, 1), make_time(2026, 7, 2)) ==
        std::vector<Time>{make_time(2026, 7, 1, 4)});
  CHECK(zoned_times(*s, make_time(2026, 12, 1), make_time(2026, 12, 2)) ==
        std::vector<Time>{make_time(2026, 12, 1, 5)});
  CHECK(s->time_zone().name() == "Europe/Paris");
  CHECK(s->describe() == "cronSchedule(0 0 6 * * ?) in Europe/Paris");
}

TEST_CASE("a fixed time in the spring gap shifts later by the gap, or is skipped") {
  CHECK(paris_day("0 30 2 * * ?", 3, 29) ==
        std::vector<ScheduledTime>{{make_time(2026, 3, 29, 1, 30), DstApplied::kShift}});
  CHECK(paris_day("0 30 2 * * ?", 3, 29, DstRule{DstGap::kSkip, DstOverlap::kFirst, true}).empty());
  // The day before and after: ordinary.
  CHECK(paris_day("0 30 2 * * ?", 3, 30) ==
        std::vector<ScheduledTime>{{make_time(2026, 3, 30, 0, 30), DstApplied::kNone}});
}

TEST_CASE("a shifted time that lands on a named time is one slot, the unmoved one") {
  CHECK(paris_day("0 30 2,3 * * ?", 3, 29) ==
        std::vector<ScheduledTime>{{make_time(2026, 3, 29, 1, 30), DstApplied::kNone}});
}

TEST_CASE("a fixed time in the autumn overlap runs first, second or both") {
  const auto first = paris_day("0 30 2 * * ?", 10, 25);
  CHECK(first == std::vector<ScheduledTime>{{make_time(2026, 10, 25, 0, 30), DstApplied::kFirst}});
  const auto second =
      paris_day("0 30 2 * * ?", 10, 25, {DstGap::kShift, DstOverlap::kSecond, true});
  CHECK(second ==
        std::vector<ScheduledTime>{{make_time(2026, 10, 25, 1, 30), DstApplied::kSecond}});
  const auto both = paris_day("0 30 2 * * ?", 10, 25, {DstGap::kShift, DstOverlap::kBoth, true});
  CHECK(both == std::vector<ScheduledTime>{{make_time(2026, 10, 25, 0, 30), DstApplied::kBoth},
                                           {make_time(2026, 10, 25, 1, 30), DstApplied::kBoth}});
}

TEST_CASE("an interval schedule fires nothing in the gap and both passes of the overlap") {
  // The local days: 29 March has 23 hours (23:00Z to 22:00Z), 25 October 25 (22:00Z to 23:00Z).
  const auto half_hours = zoned("0 0/30 * * * ?", "Europe/Paris");
  const Time spring = make_time(2026, 3, 28, 23), autumn = make_time(2026, 10, 24, 22);
  CHECK(explain(*half_hours, spring, make_time(2026, 3, 29, 22)).size() == 46);
  const auto fall = explain(*half_hours, autumn, make_time(2026, 10, 25, 23));
  CHECK(fall.size() == 50);
  for (const auto& s : fall) CHECK(s.rule == DstApplied::kNone);
  // A step in the hour field is an interval too.
  CHECK(zoned_times(*zoned("0 0 */1 * * ?", "Europe/Paris"), spring, make_time(2026, 3, 29, 22))
            .size() == 23);
}

TEST_CASE("hourly slots move only in zones whose offset is not whole hours") {
  const auto kolkata = make_hourly_schedule(*TimeZone::load("Asia/Kolkata"));
  CHECK(zoned_times(*kolkata, make_time(2026, 1, 1), make_time(2026, 1, 1, 2)) ==
        std::vector<Time>{make_time(2026, 1, 1, 0, 30), make_time(2026, 1, 1, 1, 30)});
  const auto paris = make_hourly_schedule(*TimeZone::load("Europe/Paris"));
  CHECK(zoned_times(*paris, make_time(2026, 1, 1), make_time(2026, 1, 1, 2)) ==
        std::vector<Time>{make_time(2026, 1, 1), make_time(2026, 1, 1, 1)});
  const auto kathmandu = make_minutely_schedule(*TimeZone::load("Asia/Kathmandu"));
  CHECK(zoned_times(*kathmandu, make_time(2026, 1, 1), make_time(2026, 1, 1, 0, 2)).size() == 2);
}

TEST_CASE("fixed and interval are told apart by the hour field alone") {
  auto fixed = [](std::string_view e) { return is_fixed_time(*CronExpression::parse(e)); };
  CHECK(fixed("0 0 6 * * ?"));
  CHECK(fixed("0 30 1,2,3 * * ?"));
  CHECK(fixed("0 0 1-4 ? * MON-FRI"));
  CHECK(fixed("0 */5 2 * * ?"));
  CHECK_FALSE(fixed("0 0 * * * ?"));
  CHECK_FALSE(fixed("0 0 */2 * * ?"));
  CHECK_FALSE(fixed("0 0 1/3 * * ?"));
  CHECK_FALSE(fixed("0 0 1-5/2 * * ?"));
}

TEST_CASE("the lint names fixed times inside a transition when no dst rule was given") {
  const auto s = zoned("0 30 2 * * ?", "Europe/Paris");
  const auto w = s->warnings(make_time(2026, 1, 1), make_time(2027, 1, 1));
  REQUIRE(w.size() == 2);
  CHECK_THAT(w[0], Catch::Contains("2026-03-29T02:30 does not exist") &&
                       Catch::Contains("from 02:00 to 03:00"));
  CHECK_THAT(w[1], Catch::Contains("2026-10-25T02:30 happens twice"));
  CHECK(zoned("0 30 2 * * ?", "Europe/Paris", {DstGap::kSkip, DstOverlap::kFirst, true})
            ->warnings(make_time(2026, 1, 1), make_time(2027, 1, 1))
            .empty());
  CHECK(zoned("0 0 6 * * ?", "Europe/Paris")
            ->warnings(make_time(2026, 1, 1), make_time(2027, 1, 1))
            .empty());
  CHECK(zoned("0 0/15 * * * ?", "Europe/Paris")
            ->warnings(make_time(2026, 1, 1), make_time(2027, 1, 1))
            .empty());
}

TEST_CASE("a UTC schedule explains its times with no rule and has no warnings") {
  auto s = make_cron_schedule(*CronExpression::parse("0 0 6 * * ?"));
  CHECK(explain(*s, make_time(2026, 1, 1), make_time(2026, 1, 2)) ==
        std::vector<ScheduledTime>{{make_time(2026, 1, 1, 6), DstApplied::kNone}});
  CHECK(s->time_zone().is_utc());
  CHECK(s->warnings(make_time(2026, 1, 1), make_time(2027, 1, 1)).empty());
}

TEST_CASE("dst values outside the rule are errors naming the value") {
  CHECK(parse_dst_gap("shift") == DstGap::kShift);
  CHECK(parse_dst_overlap("both") == DstOverlap::kBoth);
  CHECK_THAT(parse_dst_gap("later").error().message, Catch::Contains("gap \"later\""));
  CHECK_THAT(parse_dst_overlap("last").error().message, Catch::Contains("overlap \"last\""));
}

// docs/time-zones.md's tables, row by row: zone, expression, rule, UTC day, expected slots.
struct DocExample {
  const char* zone;
  const char* expr;
  DstRule rule;
  Time day;  // slots in [day, day + 24 h)
  std::vector<ScheduledTime> slots;
};

namespace {
const DstRule kDefault{};
const DstRule kSkipSecond{DstGap::kSkip, DstOverlap::kSecond, true};
const DstRule kBoth{DstGap::kShift, DstOverlap::kBoth, true};
const DstRule kSecond{DstGap::kShift, DstOverlap::kSecond, true};
constexpr auto kNone = DstApplied::kNone;

void check_examples(const std::vector<DocExample>& examples) {
  for (const auto& e : examples) {
    INFO(e.zone << " " << e.expr << " " << format_time(e.day));
    CHECK(explain(*zoned(e.expr, e.zone, e.rule), e.day, e.day + hours(24)) == e.slots);
  }
}
}  // namespace

TEST_CASE("the examples of docs/time-zones.md: Paris and New York") {
  check_examples({
      {"Europe/Paris",
       "0 0 6 * * ?",
       kDefault,
       make_time(2026, 3, 29),
       {{make_time(2026, 3, 29, 4), kNone}}},
      {"Europe/Paris",
       "0 0 6 * * ?",
       kDefault,
       make_time(2026, 10, 25),
       {{make_time(2026, 10, 25, 5), kNone}}},
      {"Europe/Paris", "0 30 2 * * ?", kSkipSecond, make_time(2026, 3, 29), {}},
      {"Europe/Paris",
       "0 30 2 * * ?",
       kSkipSecond,
       make_time(2026, 10, 25),
       {{make_time(2026, 10, 25, 1, 30), DstApplied::kSecond}}},
      {"America/New_York",
       "0 30 2 * * ?",
       kDefault,
       make_time(2026, 3, 8),
       {{make_time(2026, 3, 8, 7, 30), DstApplied::kShift}}},
      {"America/New_York",
       "0 30 2 * * ?",
       kDefault,
       make_time(2026, 11, 1),
       {{make_time(2026, 11, 1, 7, 30), kNone}}},
      {"America/New_York",
       "0 30 1 * * ?",
       kDefault,
       make_time(2026, 3, 8),
       {{make_time(2026, 3, 8, 6, 30), kNone}}},
      {"America/New_York",
       "0 30 1 * * ?",
       kDefault,
       make_time(2026, 11, 1),
       {{make_time(2026, 11, 1, 5, 30), DstApplied::kFirst}}},
      {"America/New_York",
       "0 30 1 * * ?",
       kSecond,
       make_time(2026, 11, 1),
       {{make_time(2026, 11, 1, 6, 30), DstApplied::kSecond}}},
  });
}

TEST_CASE("the examples of docs/time-zones.md: Lord Howe and Sao Paulo") {
  check_examples({
      {"Australia/Lord_Howe",
       "0 15 2 * * ?",
       kDefault,
       make_time(2026, 10, 3),
       {{make_time(2026, 10, 3, 15, 45), DstApplied::kShift}}},
      {"Australia/Lord_Howe",
       "0 15 2 * * ?",
       kDefault,
       make_time(2026, 4, 4),
       {{make_time(2026, 4, 4, 15, 45), kNone}}},
      {"Australia/Lord_Howe",
       "0 45 1 * * ?",
       kDefault,
       make_time(2026, 10, 3),
       {{make_time(2026, 10, 3, 15, 15), kNone}}},
      {"Australia/Lord_Howe",
       "0 45 1 * * ?",
       kBoth,
       make_time(2026, 4, 4),
       {{make_time(2026, 4, 4, 14, 45), DstApplied::kBoth},
        {make_time(2026, 4, 4, 15, 15), DstApplied::kBoth}}},
      {"America/Sao_Paulo",
       "0 30 0 * * ?",
       kDefault,
       make_time(2018, 11, 4),
       {{make_time(2018, 11, 4, 3, 30), DstApplied::kShift}}},
      {"America/Sao_Paulo", "0 30 0 * * ?", kSkipSecond, make_time(2018, 11, 4), {}},
      {"America/Sao_Paulo",
       "0 30 0 * * ?",
       kDefault,
       make_time(2026, 11, 4),
       {{make_time(2026, 11, 4, 3, 30), kNone}}},
  });
}

// A service that keeps what each submit was handed.
class ContextService : public testing::FakeExternalService {
 public:
  Result<std::string> submit_with(const SlotId& slot, const SubmitContext& context) override {
    contexts.push_back(context);
    return submit(slot);
  }
  std::vector<SubmitContext> contexts;
};

TEST_CASE("a zoned workflow's job gets its slot's local time parts, a UTC one gets none") {
  testing::SchedulerWorld w;
  auto service = std::make_shared<ContextService>();
  Workflow zoned_wf = w.workflow("paris", service);
  zoned_wf.schedule = zoned("0 0 6 * * ?", "Europe/Paris");
  zoned_wf.start_time = make_time(2026, 7, 1);
  w.add(std::move(zoned_wf));
  Workflow utc_wf = w.workflow("utc", service);
  utc_wf.schedule = make_cron_schedule(*CronExpression::parse("0 0 6 * * ?"));
  utc_wf.start_time = make_time(2026, 7, 1);
  w.add(std::move(utc_wf));
  const Time now = make_time(2026, 7, 1, 7);
  w.scheduler.step(now);  // READY
  w.scheduler.step(now);  // submitted
  REQUIRE(service->contexts.size() == 2);
  const auto& paris = service->contexts[0].variables;  // "paris" sorts first
  CHECK(paris.at("local.year") == "2026");
  CHECK(paris.at("local.month") == "07");
  CHECK(paris.at("local.hour") == "06");
  CHECK(paris.at("local.offset") == "+02:00");
  CHECK(paris.at("local.timeZone") == "Europe/Paris");
  CHECK(service->contexts[1].variables.empty());
  CHECK(w.status("paris", make_time(2026, 7, 1, 4)) == SlotStatus::kRunning);
}

}  // namespace
}  // namespace celos
