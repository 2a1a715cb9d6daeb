// Deadlines in the step, as stories at explicit times: a slot's deadline is stored when the
// step first sees it and survives edits; a miss is stored and alerted once, within the step
// that reaches the deadline; slots that succeed in time, are killed or belong to a paused
// workflow never alert; onMiss "kill" kills.
#include <catch2/catch.hpp>

#include "celos/scheduler.h"
#include "celos/state_db_open.h"
#include "testing/fakes.h"

using namespace celos;
using celos::testing::FakeExternalService;
using celos::testing::FakeFileSystemResolver;
using celos::testing::MemFileSystem;
using std::chrono::hours;
using std::chrono::minutes;

namespace {

const Time kStepDeadlineStart = make_time(2026, 3, 2, 0);

// A source whose workflows a test may replace (an edit and reload of the workflow file).
class EditableSource final : public WorkflowSource {
 public:
  WorkflowConfigPtr config;
  WorkflowConfigPtr load() override { return config; }
  void clear_cache() override {}
};

// Remembers the committed changes that carried a deadline alert.
struct Alerts final : SchedulerListener {
  std::vector<SlotChange> alerts;
  void on_slot_changes(const std::vector<SlotChange>& changes) override {
    for (const SlotChange& c : changes) {
      const auto before = c.from ? c.from->deadline_state : std::nullopt;
      if (c.to.deadline_state && c.to.deadline_state != before) alerts.push_back(c);
    }
  }
};

struct DeadlineWorld {
  std::shared_ptr<MemFileSystem> fs = std::make_shared<MemFileSystem>();
  std::shared_ptr<FakeExternalService> service = std::make_shared<FakeExternalService>();
  std::unique_ptr<StateDatabase> db = make_file_state_database(fs, "/db");
  FakeFileSystemResolver resolver{fs};
  EditableSource source;
  Scheduler scheduler{source, *db, resolver};
  Alerts alerts;
  bool ready = false;  // the trigger

  explicit DeadlineWorld(std::chrono::seconds after, bool kill = false) {
    scheduler.add_listener(alerts);
    edit(after, kill);
  }
  void edit(std::chrono::seconds after, bool kill = false) {
    auto config = std::make_shared<WorkflowConfig>();
    Workflow w;
    w.id = "wf";
    w.schedule = make_hourly_schedule();
    w.strategy = make_serial_strategy(1);
    w.trigger = make_always_trigger();
    if (!ready) w.trigger = make_not_trigger(make_always_trigger());
    w.service = service;
    w.start_time = kStepDeadlineStart;
    w.deadline = DeadlineRule{};
    w.deadline->after = after;
    w.deadline->kill_on_miss = kill;
    config->workflows["wf"] = w;
    source.config = config;
  }
  SlotState slot(Time t = kStepDeadlineStart) { return db->get_slot({"wf", t}).value().value(); }
};

}  // namespace

TEST_CASE("a slot's deadline is stored when the step first sees it, and edits do not move it") {
  DeadlineWorld w(hours(3));
  w.scheduler.step(kStepDeadlineStart + minutes(10));
  CHECK(w.slot().status == SlotStatus::kWaiting);
  CHECK(w.slot().deadline == kStepDeadlineStart + hours(3));
  w.edit(hours(1));  // the workflow's deadline changes: new slots only
  w.scheduler.step(kStepDeadlineStart + hours(1) + minutes(10));
  CHECK(w.slot().deadline == kStepDeadlineStart + hours(3));
  CHECK(w.slot(kStepDeadlineStart + hours(1)).deadline == kStepDeadlineStart + hours(2));
  CHECK(w.alerts.alerts.empty());
}

TEST_CASE("a miss is stored and alerted once, in the first step at or after the deadline") {
  DeadlineWorld w(hours(1));
  w.scheduler.step(kStepDeadlineStart + minutes(59));
  CHECK_FALSE(w.slot().deadline_state);
  w.scheduler.step(kStepDeadlineStart + hours(1));
  CHECK(w.slot().deadline_state == DeadlineState::kMissed);
  REQUIRE(w.alerts.alerts.size() == 1);
  CHECK(w.alerts.alerts[0].to.id.time == kStepDeadlineStart);
  CHECK_THAT(w.alerts.alerts[0].deadline_reason, Catch::Contains("not SUCCESS at the deadline"));
  w.scheduler.step(kStepDeadlineStart + hours(1) + minutes(5));
  CHECK(w.alerts.alerts.size() == 1);  // once
  auto listed = w.scheduler.deadlines(kStepDeadlineStart, kStepDeadlineStart + hours(2),
                                      kStepDeadlineStart + hours(1) + minutes(5), {});
  REQUIRE(listed);
  REQUIRE(listed->size() == 1);
  CHECK(listed->front().state == DeadlineState::kMissed);
}

TEST_CASE(
    "a slot that succeeds in time is MET and never alerts, one that succeeds late is MISSED") {
  DeadlineWorld w(hours(1));
  w.ready = true;
  w.edit(hours(1));
  w.scheduler.step(kStepDeadlineStart + minutes(5));  // READY
  w.scheduler.step(kStepDeadlineStart + minutes(6));  // RUNNING
  REQUIRE(w.slot().status == SlotStatus::kRunning);
  w.service->set_status(*w.slot().external_id, ExternalStatus::kSuccess);
  w.scheduler.step(kStepDeadlineStart + minutes(30));
  CHECK(w.slot().status == SlotStatus::kSuccess);
  CHECK_FALSE(w.slot().deadline_state);
  auto met = w.scheduler.deadline_view("wf", kStepDeadlineStart, kStepDeadlineStart + hours(5));
  REQUIRE(met);
  REQUIRE(*met);
  CHECK((*met)->state == DeadlineState::kMet);
  // The next slot's job ends after its deadline, seen by a step after it: MISSED.
  w.scheduler.step(kStepDeadlineStart + hours(1) + minutes(5));
  w.scheduler.step(kStepDeadlineStart + hours(1) + minutes(6));
  REQUIRE(w.slot(kStepDeadlineStart + hours(1)).status == SlotStatus::kRunning);
  w.service->set_status(*w.slot(kStepDeadlineStart + hours(1)).external_id,
                        ExternalStatus::kSuccess);
  // (no step between the deadline and the success)
  w.scheduler.step(kStepDeadlineStart + hours(2) + minutes(1));
  CHECK(w.slot(kStepDeadlineStart + hours(1)).status == SlotStatus::kSuccess);
  CHECK(w.slot(kStepDeadlineStart + hours(1)).deadline_state == DeadlineState::kMissed);
  REQUIRE(w.alerts.alerts.size() == 1);
  CHECK_THAT(w.alerts.alerts[0].deadline_reason, Catch::Contains("SUCCESS only after"));
}

TEST_CASE("a killed slot and a paused workflow do not alert") {
  DeadlineWorld w(hours(1));
  w.scheduler.step(kStepDeadlineStart + minutes(10));
  REQUIRE(w.scheduler.kill("wf", kStepDeadlineStart, kStepDeadlineStart + minutes(20)));
  REQUIRE(w.scheduler.pause("wf", true));
  w.scheduler.step(kStepDeadlineStart + hours(2) +
                   minutes(30));  // slot 1:00's deadline passes, paused
  REQUIRE(w.scheduler.pause("wf", false));
  w.scheduler.step(kStepDeadlineStart + hours(3));
  CHECK(w.slot().status == SlotStatus::kKilled);
  CHECK_FALSE(w.slot().deadline_state);
  for (const SlotChange& c : w.alerts.alerts) CHECK(c.to.id.time != kStepDeadlineStart);
}

TEST_CASE("onMiss kill kills a running slot that missed its deadline") {
  DeadlineWorld w(hours(1), true);
  w.ready = true;
  w.edit(hours(1), true);
  w.scheduler.step(kStepDeadlineStart + minutes(5));
  w.scheduler.step(kStepDeadlineStart + minutes(6));
  REQUIRE(w.slot().status == SlotStatus::kRunning);
  const std::string job = *w.slot().external_id;
  w.scheduler.step(kStepDeadlineStart + hours(1));
  CHECK(w.slot().status == SlotStatus::kKilled);
  CHECK(w.slot().deadline_state == DeadlineState::kMissed);
  CHECK(std::count(w.service->killed.begin(), w.service->killed.end(), job) == 1);
  REQUIRE(w.alerts.alerts.size() == 1);
}

TEST_CASE("an operator moves one slot's deadline, the miss is judged against the new one") {
  DeadlineWorld w(hours(1));
  w.scheduler.step(kStepDeadlineStart + minutes(10));
  auto moved = w.scheduler.set_deadline("wf", kStepDeadlineStart, kStepDeadlineStart + hours(4),
                                        kStepDeadlineStart + minutes(20));
  REQUIRE(moved);
  CHECK(w.slot().deadline == kStepDeadlineStart + hours(4));
  w.scheduler.step(kStepDeadlineStart + hours(2));
  CHECK_FALSE(w.slot().deadline_state);
  w.scheduler.step(kStepDeadlineStart + hours(4));
  CHECK(w.slot().deadline_state == DeadlineState::kMissed);
  CHECK(w.scheduler
            .set_deadline("wf", kStepDeadlineStart + minutes(1), kStepDeadlineStart,
                          kStepDeadlineStart)
            .error()
            .code == ErrorCode::kNotFound);
}
