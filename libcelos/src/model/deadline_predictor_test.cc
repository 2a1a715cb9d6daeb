// The history predictor (celos/deadline_predictor.h) fed slot changes directly: hours of day are
// judged by their own samples, one outlier in an hour's few samples does not make it late, a slot
// is at risk when three in four of its hour's slots ended after its deadline, and a run that is
// overdue is judged by the past runs that lasted as long, its own or, while it has few, every
// workflow's.
#include "celos/deadline_predictor.h"

#include <memory>

#include <catch2/catch.hpp>

using namespace celos;
using std::chrono::hours;
using std::chrono::minutes;

namespace {

const Time kDeadlinePredictorStart = make_time(2026, 3, 2, 0);

Workflow workflow(const std::string& id = "wf") {
  Workflow w;
  w.id = id;
  return w;
}

// One slot through READY, RUNNING and SUCCESS, as the scheduler commits it.
void run_slot(HistoryPredictor& p, Time slot, minutes ready, minutes run,
              const std::string& wf = "wf") {
  SlotState s;
  s.id = {wf, slot};
  auto change = [&](SlotStatus status, Time at) {
    SlotState next = s;
    next.status = status;
    p.on_slot_changes({SlotChange{s, next, at, "step"}});
    s = next;
  };
  change(SlotStatus::kReady, slot + ready);
  change(SlotStatus::kRunning, slot + ready);
  change(SlotStatus::kSuccess, slot + ready + run);
}

SlotState running(Time slot, const std::string& wf = "wf") {
  SlotState s;
  s.id = {wf, slot};
  s.status = SlotStatus::kRunning;
  return s;
}

// Starts `slot`'s run at `started` (the predictor learns when it began).
void start(HistoryPredictor& p, Time slot, Time started, const std::string& wf = "wf") {
  SlotState waiting;
  waiting.id = {wf, slot};
  p.on_slot_changes({SlotChange{waiting, running(slot, wf), started, "step"}});
}

SlotState waiting(Time slot) {
  SlotState s;
  s.id = {"wf", slot};
  return s;
}

}  // namespace

TEST_CASE("a batch that runs twice as long at night is judged by its nights and by its days") {
  HistoryPredictor p;
  for (int h = 0; h < 4 * 24; ++h) {  // four days: four samples of each hour
    const Time slot = kDeadlinePredictorStart + hours(h);
    run_slot(p, slot, minutes(10), to_civil(slot).hour < 6 ? minutes(60) : minutes(30));
  }
  const Time day = kDeadlinePredictorStart + hours(4 * 24 + 10),
             night = kDeadlinePredictorStart + hours(4 * 24 + 2);
  start(p, day, day + minutes(10));
  start(p, night, night + minutes(10));
  const auto by_day = p.predict(workflow(), running(day), day + minutes(11));
  const auto by_night = p.predict(workflow(), running(night), night + minutes(11));
  REQUIRE(by_day.finish);
  REQUIRE(by_night.finish);
  CHECK(*by_day.finish == day + minutes(40));      // started + the day hours' 30 min
  CHECK(*by_night.finish == night + minutes(70));  // started + the night hours' 60 min
}

TEST_CASE("one late input among an hour's samples does not become that hour's p90") {
  HistoryPredictor p;
  for (int h = 0; h < 6 * 24; ++h) {
    const Time slot = kDeadlinePredictorStart + hours(h);
    const bool late = h == 24 + 14;  // the second day's 14:00: 90 minutes late
    run_slot(p, slot, late ? minutes(90) : minutes(10), minutes(30));
  }
  SlotState waiting;
  waiting.id = {"wf", kDeadlinePredictorStart + hours(6 * 24 + 14)};
  const auto f = p.predict(workflow(), waiting, waiting.id.time + minutes(1));
  REQUIRE(f.finish);
  CHECK(*f.finish == waiting.id.time + minutes(40));  // ready 10 min, runs 30 min
  CHECK_THAT(f.reason, Catch::Contains("input usually ready 10 min"));
}

TEST_CASE("an overdue run is judged by the past runs that lasted as long, else by how late") {
  HistoryPredictor p;
  for (int h = 0; h < 40; ++h) {
    const bool slow = h % 10 == 3;  // 4 of 40 runs took three times as long
    run_slot(p, kDeadlinePredictorStart + hours(h), minutes(10), slow ? minutes(90) : minutes(30));
  }
  const Time slot = kDeadlinePredictorStart + hours(40);
  start(p, slot, slot + minutes(10));
  // Overdue at 40 min: the runs that lasted longer took 90 min.
  auto f = p.predict(workflow(), running(slot), slot + minutes(50));
  REQUIRE(f.finish);
  CHECK(*f.finish == slot + minutes(100));
  CHECK_THAT(f.reason, Catch::Contains("its runs that lasted this long took 90 min or more"));
  // Past every run of its history at 100 min: as far again past the median (30 min).
  f = p.predict(workflow(), running(slot), slot + minutes(110));
  REQUIRE(f.finish);
  CHECK(*f.finish == slot + minutes(110) + minutes(70));
}

TEST_CASE("a slot is at risk when more than three in four of its hour's slots ended after it") {
  // The 14:00 slots end 40 min after the slot time, or 60 min when the input came 20 min later;
  // the question is whether a deadline 50 min after the slot is at risk before anything happened.
  const auto history = [](int late_days) {
    auto p = std::make_unique<HistoryPredictor>();
    for (int day = 0; day < 8; ++day) {
      for (int h = 0; h < 24; ++h) {
        const Time slot = kDeadlinePredictorStart + hours(24 * day + h);
        const bool late = h == 14 && day < late_days;
        run_slot(*p, slot, late ? minutes(30) : minutes(10), minutes(30));
      }
    }
    return p;
  };
  const Time slot = kDeadlinePredictorStart + hours(8 * 24 + 14);
  const Time deadline = slot + minutes(50);
  auto six_late = history(6)->predict(workflow(), waiting(slot), slot + minutes(1));
  REQUIRE(six_late.finish);
  CHECK(*six_late.finish <= deadline);  // two in eight ended in time
  CHECK(*six_late.finish == slot + minutes(40));
  auto seven_late = history(7)->predict(workflow(), waiting(slot), slot + minutes(1));
  REQUIRE(seven_late.finish);
  CHECK(*seven_late.finish > deadline);
  CHECK(*seven_late.finish == slot + minutes(60));
  CHECK_THAT(seven_late.reason, Catch::Contains("3 in 4 slots of this hour were SUCCESS 60 min "
                                                "or more after it"));
}

TEST_CASE("a ready slot is judged by how long its slots took from READY to SUCCESS") {
  HistoryPredictor p;
  for (int h = 0; h < 24; ++h) {
    run_slot(p, kDeadlinePredictorStart + hours(h), minutes(10), minutes(30));
  }
  const Time slot = kDeadlinePredictorStart + hours(30);
  SlotState ready = waiting(slot);
  ready.status = SlotStatus::kReady;
  p.on_slot_changes({SlotChange{waiting(slot), ready, slot + minutes(12), "step"}});
  const auto f = p.predict(workflow(), ready, slot + minutes(20));
  REQUIRE(f.finish);
  CHECK(*f.finish == slot + minutes(42));  // READY at 12 min, then 30 min as always
}

TEST_CASE("a workflow with few overruns of its own is judged by every workflow's") {
  HistoryPredictor p;
  // Another workflow: runs of 30 min, every fifth three times as long. Its medians are known to
  // the predictor as they are after the steps' predictions, so its overruns count for all.
  for (int h = 0; h < 40; ++h) {
    const Time slot = kDeadlinePredictorStart + hours(h);
    run_slot(p, slot, minutes(10), h % 5 == 4 ? minutes(90) : minutes(30), "other");
    (void)p.predict(workflow("other"), running(slot + hours(1), "other"), slot + minutes(20));
  }
  // This one never overran: 20 min, always.
  for (int h = 0; h < 10; ++h)
    run_slot(p, kDeadlinePredictorStart + hours(h), minutes(5), minutes(20));
  const Time slot = kDeadlinePredictorStart + hours(10);
  start(p, slot, slot + minutes(5));
  // At 30 min it ran half as long again as ever: runs that overran that far took three times
  // their median, 60 min here.
  const auto f = p.predict(workflow(), running(slot), slot + minutes(35));
  REQUIRE(f.finish);
  CHECK(*f.finish == slot + minutes(5 + 60));
  CHECK_THAT(f.reason, Catch::Contains("every workflow's runs that lasted this long took 60 min"));
  // Before it overran, its own runs judge it.
  const auto early = p.predict(workflow(), running(slot), slot + minutes(15));
  REQUIRE(early.finish);
  CHECK(*early.finish == slot + minutes(25));
}
