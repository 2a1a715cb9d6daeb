// celos.*Schedule, celos.serialSchedulingStrategy and the celos.*Trigger functions, evaluated
// in a heap of their own as a workflow file would be (js_schedules.cc).
#include <set>

#include <catch2/catch.hpp>

#include "js/js_api_test_util.h"

namespace celos {
namespace {

using namespace js_test;

// A trigger context that records what the trigger asks.
class RecordingContext : public TriggerContext {
 public:
  Time now() const override { return now_; }
  Result<bool> path_exists(const std::string& fs, const std::string& path) override {
    asked_paths.emplace_back(fs, path);
    return existing.count({fs, path}) > 0;
  }
  Result<bool> slot_succeeded(const std::string& workflow, Time time) override {
    asked_slots.emplace_back(workflow, time);
    return succeeded.count({workflow, time}) > 0;
  }
  Time now_ = make_time(2030, 1, 1);
  std::set<std::pair<std::string, std::string>> existing;
  std::set<std::pair<std::string, Time>> succeeded;
  std::vector<std::pair<std::string, std::string>> asked_paths;
  std::vector<std::pair<std::string, Time>> asked_slots;
};

const Time kSlot = make_time(2015, 9, 13, 13, 0, 0);

TriggerPtr trigger_of(const std::string& expression, const std::string& prelude = "") {
  return only_workflow(eval(prelude + define("trigger: " + expression))).trigger;
}

TriggerStatus evaluate(const TriggerPtr& trigger, RecordingContext& context, Time slot = kSlot) {
  auto status = trigger->evaluate(slot, context);
  REQUIRE(status);
  return *status;
}

}  // namespace

// ---- schedules and strategies --------------------------------------------------------------

std::vector<Time> schedule_times(const std::string& expression, Time start, Time end) {
  auto schedule = only_workflow(eval(define("schedule: " + expression))).schedule;
  auto times = schedule->times(start, end, ScheduleContext{});
  REQUIRE(times);
  return *times;
}

TEST_CASE("hourlySchedule, minutelySchedule and cronSchedule yield their slots") {
  const Time start = make_time(2015, 9, 13, 0, 0, 0);
  CHECK(schedule_times("celos.hourlySchedule()", start, start + std::chrono::hours(3)) ==
        std::vector<Time>{start, start + std::chrono::hours(1), start + std::chrono::hours(2)});
  CHECK(schedule_times("celos.minutelySchedule()", start, start + std::chrono::minutes(2)) ==
        std::vector<Time>{start, start + std::chrono::minutes(1)});
  CHECK(
      schedule_times("celos.cronSchedule('0 0 5 * * ?')", start, start + std::chrono::hours(48)) ==
      std::vector<Time>{make_time(2015, 9, 13, 5), make_time(2015, 9, 14, 5)});
}

TEST_CASE("an invalid cron expression is a load error that names the wrong field") {
  CHECK_THAT(error_of("celos.cronSchedule('0 0 25 * * ?');"),
             Catch::Contains("celos.cronSchedule:") && Catch::Contains("hour"));
  CHECK_THAT(
      error_of("celos.cronSchedule();"),
      Catch::Contains("celos.cronSchedule: argument cronExpr must be a string, got undefined"));
}

TEST_CASE("dependentSchedule follows the other workflow's schedule") {
  auto schedule =
      only_workflow(eval(define("schedule: celos.dependentSchedule('other')"))).schedule;
  auto other = only_workflow(eval(define("schedule: celos.minutelySchedule()"))).schedule;
  ScheduleContext context;
  context.lookup = [&](std::string_view id) -> const Schedule* {
    return id == "other" ? other.get() : nullptr;
  };
  const Time start = make_time(2015, 9, 13);
  auto times = schedule->times(start, start + std::chrono::minutes(3), context);
  REQUIRE(times);
  CHECK(times->size() == 3);
  CHECK_THAT(error_of("celos.dependentSchedule();"),
             Catch::Contains("celos.dependentSchedule: argument workflowId must be a string"));
}

TEST_CASE("serialSchedulingStrategy defaults to one slot at a time and validates concurrency") {
  CHECK(only_workflow(eval(define("schedulingStrategy: celos.serialSchedulingStrategy(3)")))
            .strategy->describe() == "serialSchedulingStrategy(3)");
  CHECK_THAT(error_of("celos.serialSchedulingStrategy(0);"),
             Catch::Contains(
                 "celos.serialSchedulingStrategy: argument concurrency must be an integer >= 1"));
  CHECK_THAT(
      error_of("celos.serialSchedulingStrategy('2');"),
      Catch::Contains("celos.serialSchedulingStrategy: argument concurrency must be a number"));
}

TEST_CASE("a cron schedule denser than one slot a minute is a load error saying how dense") {
  const FileEvaluation result = eval("\nvar s = celos.cronSchedule('* * * * * ?');\n");
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].line == 2);
  CHECK_THAT(result.errors[0].message,
             Catch::Contains("celos.cronSchedule: cron expression \"* * * * * ?\" fires up to "
                             "86400 times a day") &&
                 Catch::Contains("604800 slots"));
  CHECK_THAT(error_of("celos.cronSchedule('0/30 * * * * ?');"),
             Catch::Contains("2880 times a day"));
  // One a minute is the densest schedule allowed, on any days.
  CHECK(eval("celos.cronSchedule('0 * * * * ?'); celos.cronSchedule('0 * * ? * MON');")
            .errors.empty());
}

// ---- triggers ------------------------------------------------------------------------------

TEST_CASE("alwaysTrigger is always ready") {
  RecordingContext context;
  const TriggerStatus status = evaluate(trigger_of("celos.alwaysTrigger()"), context);
  CHECK(status.type == "AlwaysTrigger");
  CHECK(status.ready);
}

TEST_CASE("hdfsCheckTrigger checks the path with the slot's time on the given file system") {
  RecordingContext context;
  context.existing.insert({"file:///", "/in/2015-09-13/1300/_READY"});
  SECTION("an explicit file system") {
    const auto status = evaluate(
        trigger_of(
            "celos.hdfsCheckTrigger('/in/${year}-${month}-${day}/${hour}00/_READY', 'file:///')"),
        context);
    CHECK(status.type == "HDFSCheckTrigger");
    CHECK(status.ready);
  }
  SECTION("CELOS_DEFAULT_HDFS when none is given") {
    const auto status = evaluate(
        trigger_of("celos.hdfsCheckTrigger('/in/${year}-${month}-${day}/${hour}00/_READY')",
                   "var CELOS_DEFAULT_HDFS = 'file:///';\n"),
        context);
    CHECK(status.ready);
  }
  SECTION("the default file system without CELOS_DEFAULT_HDFS") {
    const auto status = evaluate(trigger_of("celos.hdfsCheckTrigger('/in/x')"), context);
    CHECK_FALSE(status.ready);
    REQUIRE(context.asked_paths.size() == 1);
    CHECK(context.asked_paths[0] == std::pair<std::string, std::string>{"", "/in/x"});
  }
  CHECK_THAT(error_of("celos.hdfsCheckTrigger();"),
             Catch::Contains("celos.hdfsCheckTrigger: argument path must be a string"));
  CHECK_THAT(error_of("celos.hdfsCheckTrigger('/x', 5);"),
             Catch::Contains("celos.hdfsCheckTrigger: argument fs must be a string"));
}

TEST_CASE("successTrigger waits for the same slot of another workflow") {
  RecordingContext context;
  auto trigger = trigger_of("celos.successTrigger('upstream')");
  CHECK_FALSE(evaluate(trigger, context).ready);
  context.succeeded.insert({"upstream", kSlot});
  const auto status = evaluate(trigger, context);
  CHECK(status.type == "SuccessTrigger");
  CHECK(status.ready);
  CHECK_THAT(error_of("celos.successTrigger(1);"),
             Catch::Contains("celos.successTrigger: argument workflowId must be a string"));
}

TEST_CASE("andTrigger, orTrigger and notTrigger combine triggers") {
  RecordingContext context;
  CHECK(evaluate(trigger_of("celos.andTrigger()"), context).ready);
  CHECK_FALSE(evaluate(trigger_of("celos.orTrigger()"), context).ready);
  CHECK_FALSE(evaluate(trigger_of("celos.notTrigger(celos.alwaysTrigger())"), context).ready);
  const auto both = evaluate(
      trigger_of(
          "celos.andTrigger(celos.alwaysTrigger(), celos.hdfsCheckTrigger('/x', 'file:///'))"),
      context);
  CHECK(both.type == "AndTrigger");
  CHECK_FALSE(both.ready);
  CHECK(both.sub_statuses.size() == 2);
  const auto either = evaluate(
      trigger_of(
          "celos.orTrigger(celos.alwaysTrigger(), celos.hdfsCheckTrigger('/x', 'file:///'))"),
      context);
  CHECK(either.type == "OrTrigger");
  CHECK(either.ready);
  CHECK_THAT(
      error_of("celos.andTrigger(celos.alwaysTrigger(), 'x');"),
      Catch::Contains(
          "celos.andTrigger: argument 2 must be a trigger made by celos.*Trigger(), got a string"));
  CHECK_THAT(error_of("celos.orTrigger({});"),
             Catch::Contains("celos.orTrigger: argument 1 must be a trigger"));
  CHECK_THAT(error_of("celos.notTrigger(celos.hourlySchedule());"),
             Catch::Contains("celos.notTrigger: argument trigger must be a trigger made by "
                             "celos.*Trigger(), got a schedule"));
}

TEST_CASE("delayTrigger is ready once the delay after the slot has passed") {
  RecordingContext context;
  auto trigger = trigger_of("celos.delayTrigger(60 * 60)");
  context.now_ = kSlot + std::chrono::hours(1);
  CHECK_FALSE(evaluate(trigger, context).ready);
  context.now_ = kSlot + std::chrono::hours(1) + std::chrono::seconds(1);
  const auto status = evaluate(trigger, context);
  CHECK(status.type == "DelayTrigger");
  CHECK(status.ready);
  CHECK_THAT(error_of("celos.delayTrigger('1h');"),
             Catch::Contains("celos.delayTrigger: argument seconds must be a number"));
}

TEST_CASE("offsetTrigger evaluates its trigger for a later slot time") {
  RecordingContext context;
  const auto status = evaluate(
      trigger_of("celos.offsetTrigger(60 * 60, celos.hdfsCheckTrigger('/in/${hour}', 'file:///'))"),
      context);
  CHECK(status.type == "OffsetTrigger");
  REQUIRE(context.asked_paths.size() == 1);
  CHECK(context.asked_paths[0].second == "/in/14");
  CHECK_THAT(error_of("celos.offsetTrigger(60);"),
             Catch::Contains("celos.offsetTrigger: argument trigger must be a trigger"));
  CHECK_THAT(error_of("celos.offsetTrigger('60', celos.alwaysTrigger());"),
             Catch::Contains("celos.offsetTrigger: argument seconds must be a number"));
}

TEST_CASE("objects made by the API cannot be forged or mixed up") {
  CHECK_THAT(
      error_of(
          "var t = celos.alwaysTrigger();\nvar fake = {};\nfor (var k in t) fake[k] = t[k];\n" +
          define("trigger: fake")),
      Catch::Contains("got a plain object"));
}

}  // namespace celos

namespace celos {

// ---- schedules in local time (issue 26) ----------------------------------------------------

TEST_CASE("cronSchedule reads its expression in the timeZone it is given") {
  using js_test::only_workflow;
  auto schedule =
      only_workflow(js_test::eval(js_test::define(
                        "schedule: celos.cronSchedule('0 0 6 * * ?', "
                        "{timeZone: 'Europe/Paris', dst: {gap: 'skip', overlap: 'both'}})")))
          .schedule;
  CHECK(schedule->time_zone().name() == "Europe/Paris");
  CHECK(*schedule->times(make_time(2026, 7, 1), make_time(2026, 7, 2), ScheduleContext{}) ==
        std::vector<Time>{make_time(2026, 7, 1, 4)});
  // dst given: no lint.
  CHECK(schedule->warnings(make_time(2026, 1, 1), make_time(2027, 1, 1)).empty());
}

TEST_CASE(
    "hourlySchedule and minutelySchedule take a timeZone, CELOS_DEFAULT_TIME_ZONE is the default") {
  using js_test::only_workflow;
  auto hourly = only_workflow(js_test::eval(js_test::define(
                                  "schedule: celos.hourlySchedule({timeZone: 'Asia/Kolkata'})")))
                    .schedule;
  CHECK(*hourly->times(make_time(2026, 1, 1), make_time(2026, 1, 1, 1), ScheduleContext{}) ==
        std::vector<Time>{make_time(2026, 1, 1, 0, 30)});
  auto defaulted =
      only_workflow(js_test::eval("var CELOS_DEFAULT_TIME_ZONE = 'Asia/Kolkata';\n" +
                                  js_test::define("schedule: celos.minutelySchedule()")))
          .schedule;
  CHECK(defaulted->time_zone().name() == "Asia/Kolkata");
  auto given =
      only_workflow(js_test::eval("var CELOS_DEFAULT_TIME_ZONE = 'Asia/Kolkata';\n" +
                                  js_test::define("schedule: celos.cronSchedule('0 0 6 * * ?', "
                                                  "{timeZone: 'UTC'})")))
          .schedule;
  CHECK(given->time_zone().is_utc());
  auto plain =
      only_workflow(js_test::eval(js_test::define("schedule: celos.hourlySchedule()"))).schedule;
  CHECK(plain->time_zone().is_utc());
}

TEST_CASE("a bad timeZone or dst is a load error naming the function and the field") {
  using js_test::error_of;
  CHECK_THAT(error_of("celos.cronSchedule('0 0 6 * * ?', {timeZone: 'Europe/Pari'});"),
             Catch::Contains("celos.cronSchedule: field \"timeZone\": unknown time zone "
                             "\"Europe/Pari\" (tzdata "));
  CHECK_THAT(error_of("celos.cronSchedule('0 0 6 * * ?', {timeZone: 'Europe/Paris', "
                      "dst: {gap: 'later'}});"),
             Catch::Contains("celos.cronSchedule: field \"dst.gap\": gap \"later\" is not one of"));
  CHECK_THAT(error_of("celos.cronSchedule('0 0 6 * * ?', {dst: {overlap: 'last'}});"),
             Catch::Contains("field \"dst.overlap\": overlap \"last\""));
  CHECK_THAT(error_of("celos.cronSchedule('0 0 6 * * ?', {dst: {fall: 'first'}});"),
             Catch::Contains("unknown field \"dst.fall\""));
  CHECK_THAT(
      error_of("celos.hourlySchedule({timezone: 'Europe/Paris'});"),
      Catch::Contains("celos.hourlySchedule: unknown field \"timezone\" (known: timeZone, dst)"));
  CHECK_THAT(error_of("celos.minutelySchedule('Europe/Paris');"),
             Catch::Contains("celos.minutelySchedule: argument options must be an object"));
  CHECK_THAT(error_of("var CELOS_DEFAULT_TIME_ZONE = 'Nowhere/Town';\ncelos.hourlySchedule();"),
             Catch::Contains("CELOS_DEFAULT_TIME_ZONE: unknown time zone \"Nowhere/Town\""));
}

TEST_CASE("a load error in a zone option names the file and line") {
  const auto result = js_test::eval("\n\ncelos.cronSchedule('0 0 6 * * ?', {timeZone: 'X/Y'});");
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].file == "test.js");
  CHECK(result.errors[0].line == 3);
}

}  // namespace celos
