// Range reruns and kills, and slot history through the scheduler.
#include <catch2/catch.hpp>

#include "celos/scheduler.h"
#include "celos/slot_history.h"
#include "testing/scheduler_world.h"

using namespace celos;
using celos::testing::kStart;
using std::chrono::hours;

namespace {

// One hourly workflow "wf" with slot history; the resolver serves the database's file system, so
// db_fs holds every file.
struct RangeOpsWorld : celos::testing::SchedulerWorld {
  RangeOpsWorld() : SchedulerWorld({.data_on_db_fs = true, .history = true}) { add("wf"); }

  void store(Time t, SlotStatus s, std::optional<std::string> job = {}) {
    SchedulerWorld::store("wf", t, s, std::move(job));
  }
  SlotStatus status(Time t) { return SchedulerWorld::status("wf", t); }
  RangeRequest request(Time start, Time end, bool dry_run = false) {
    RangeRequest r;
    r.workflow = "wf";
    r.start = start;
    r.end = end;
    r.dry_run = dry_run;
    r.now = kStart + hours(24 * 30);
    r.by = "api:anonymous@127.0.0.1";
    return r;
  }
};

}  // namespace

TEST_CASE("a dry-run range rerun lists what would move and what is skipped, changing nothing") {
  RangeOpsWorld w;
  w.store(kStart, SlotStatus::kFailure);
  w.store(kStart + hours(1), SlotStatus::kRunning, "job-1");
  w.store(kStart + hours(2), SlotStatus::kSuccess);
  const auto before = w.db_fs->files();
  auto r =
      w.scheduler.range(RangeAction::kRerun, w.request(kStart - hours(5), kStart + hours(4), true));
  REQUIRE(r);
  CHECK(r->dry_run);
  REQUIRE(r->slots.size() == 3);  // 00:00 FAILURE, 02:00 SUCCESS, 03:00 nothing stored
  CHECK(r->slots[0].time == kStart);
  CHECK(r->slots[0].from == SlotStatus::kFailure);
  CHECK(r->slots[2].from == std::nullopt);
  CHECK(r->slots[2].to == SlotStatus::kWaiting);
  REQUIRE(r->skipped.size() == 1);
  CHECK(r->skipped[0].time == kStart + hours(1));
  CHECK(r->skipped[0].status == SlotStatus::kRunning);
  CHECK(w.db_fs->files() == before);
}

TEST_CASE("a range rerun with a status filter reruns only those slots, with markers and history") {
  RangeOpsWorld w;
  w.store(kStart, SlotStatus::kFailure);
  w.store(kStart + hours(1), SlotStatus::kSuccess);
  w.store(kStart + hours(2), SlotStatus::kFailure);
  auto req = w.request(kStart, kStart + hours(3));
  req.statuses = std::set<SlotStatus>{SlotStatus::kFailure};
  auto r = w.scheduler.range(RangeAction::kRerun, req);
  REQUIRE(r);
  CHECK(r->slots.size() == 2);
  CHECK(r->skipped.empty());
  CHECK(w.status(kStart) == SlotStatus::kWaiting);
  CHECK(w.status(kStart + hours(1)) == SlotStatus::kSuccess);
  CHECK(w.db->rerun_times("wf", req.now).value() == std::vector<Time>{kStart, kStart + hours(2)});
  auto history = w.scheduler.slot_history("wf", kStart);
  REQUIRE(history);
  REQUIRE(history->size() == 1);
  CHECK((*history)[0].from == SlotStatus::kFailure);
  CHECK((*history)[0].by == "api:anonymous@127.0.0.1");
  CHECK((*history)[0].at == req.now);
}

TEST_CASE("a range kill kills running jobs and skips final slots") {
  RangeOpsWorld w;
  w.store(kStart, SlotStatus::kRunning, "job-7");
  w.store(kStart + hours(1), SlotStatus::kSuccess);
  auto r = w.scheduler.range(RangeAction::kKill, w.request(kStart, kStart + hours(2)));
  REQUIRE(r);
  REQUIRE(r->slots.size() == 1);
  CHECK(w.status(kStart) == SlotStatus::kKilled);
  CHECK(w.service->killed == std::vector<std::string>{"job-7"});
  REQUIRE(r->skipped.size() == 1);
  CHECK(r->skipped[0].status == SlotStatus::kSuccess);
}

TEST_CASE("a range over 10,000 slots or inverted is refused and changes nothing") {
  RangeOpsWorld w;
  auto big =
      w.scheduler.range(RangeAction::kRerun, w.request(kStart, kStart + hours(kMaxRangeSlots + 1)));
  REQUIRE_FALSE(big);
  CHECK(big.error().code == ErrorCode::kInvalid);
  CHECK(w.db_fs->files().empty());
  CHECK(w.scheduler.range(RangeAction::kRerun, w.request(kStart, kStart + hours(kMaxRangeSlots)))
            ->slots.size() == kMaxRangeSlots);
  // Counted from the workflow's start time: slots before it are not in the range.
  CHECK(w.scheduler.range(RangeAction::kRerun,
                          w.request(kStart - hours(20000), kStart + hours(10), true)));
  CHECK(w.scheduler.range(RangeAction::kRerun, w.request(kStart + hours(1), kStart)).error().code ==
        ErrorCode::kInvalid);
  CHECK(w.scheduler
            .range(RangeAction::kRerun,
                   [&] {
                     auto r = w.request(kStart, kStart + hours(1));
                     r.workflow = "nope";
                     return r;
                   }())
            .error()
            .code == ErrorCode::kNotFound);
}

TEST_CASE("every change of a step is recorded in the slot history with the step's time") {
  RangeOpsWorld w;
  const Time now = kStart + hours(1) + std::chrono::minutes(5);
  w.scheduler.step(now);
  w.scheduler.step(now + hours(1));
  auto history = w.scheduler.slot_history("wf", kStart);
  REQUIRE(history);
  REQUIRE(history->size() == 2);
  CHECK((*history)[0].from == std::nullopt);
  CHECK((*history)[0].to.status == SlotStatus::kReady);
  CHECK((*history)[0].at == now);
  CHECK((*history)[0].by == "step");
  CHECK((*history)[1].to.status == SlotStatus::kRunning);
  CHECK((*history)[1].to.external_id == "job-1");
  CHECK(w.scheduler.slot_history("wf", kStart + std::chrono::minutes(1)).error().code ==
        ErrorCode::kNotFound);
  CHECK(w.scheduler.slot_history("nope", kStart).error().code == ErrorCode::kNotFound);
}
