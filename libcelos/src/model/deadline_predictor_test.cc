// The history predictor (celos/deadline_predictor.h) fed slot changes directly: hours of day are
// judged by their own medians, one outlier in an hour's few samples does not become its p90, and
// a run that is overdue is judged by the past runs that lasted as long.
#include "celos/deadline_predictor.h"

#include <catch2/catch.hpp>

using namespace celos;
using std::chrono::hours;
using std::chrono::minutes;

namespace {

const Time kDeadlinePredictorStart = make_time(2026, 3, 2, 0);

Workflow workflow() {
  Workflow w;
  w.id = "wf";
  return w;
}

// One slot through READY, RUNNING and SUCCESS, as the scheduler commits it.
void run_slot(HistoryPredictor& p, Time slot, minutes ready, minutes run) {
  SlotState s;
  s.id = {"wf", slot};
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

SlotState running(Time slot) {
  SlotState s;
  s.id = {"wf", slot};
  s.status = SlotStatus::kRunning;
  return s;
}

// Starts `slot`'s run at `started` (the predictor learns when it began).
void start(HistoryPredictor& p, Time slot, Time started) {
  SlotState waiting;
  waiting.id = {"wf", slot};
  p.on_slot_changes({SlotChange{waiting, running(slot), started, "step"}});
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
  CHECK_THAT(f.reason, Catch::Contains("runs that lasted this long took 90 min (first quartile)"));
  // Past every run of its history at 100 min: as far again past the median (30 min).
  f = p.predict(workflow(), running(slot), slot + minutes(110));
  REQUIRE(f.finish);
  CHECK(*f.finish == slot + minutes(110) + minutes(70));
}
