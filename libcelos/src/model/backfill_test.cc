// Backfill plans through the real scheduler and the file state database (issue 29): counting,
// admission in order, the lanes, pause, resume, cancel, and a crash between the writes.
#include "celos/backfill.h"

#include <catch2/catch.hpp>

#include "celos/scheduler.h"
#include "testing/scheduler_world.h"

using namespace celos;
using celos::testing::kStart;
using std::chrono::hours;

namespace {

const Time kBackfillNow = kStart + hours(24 * 30);

// Two hourly workflows, one slot at a time; every slot of their live window is SUCCESS, so the
// backfill's slots (the first days) compete only with what a test puts there.
struct BackfillWorld : celos::testing::SchedulerWorld {
  BackfillWorld() {
    add("a");
    add("b");
    std::vector<SlotState> done;
    for (Time t = kBackfillNow - kSlidingWindow; t < kBackfillNow + hours(1); t += hours(1)) {
      for (const char* id : {"a", "b"})
        done.push_back(SlotState::of({id, t}, SlotStatus::kSuccess));
    }
    REQUIRE(db->put_slots(done));
  }
  Backfills backfills() { return Backfills(*scheduler.config(), *db); }
  BackfillRequest request(std::string workflows, Time start, Time end) {
    BackfillRequest r;
    r.workflows = std::move(workflows);
    r.start = start;
    r.end = end;
    r.now = kBackfillNow;
    return r;
  }
  std::string create(BackfillRequest r) {
    auto created = backfills().create(r);
    REQUIRE(created);
    REQUIRE(created->id);
    return *created->id;
  }
  BackfillPlan plan(const std::string& id) { return backfills().get(id).value(); }
  // One step, then every job the fake runs succeeds.
  void step_and_finish(Time at = kBackfillNow) {
    scheduler.step(at);
    for (auto& [job, status] : service->statuses) status = ExternalStatus::kSuccess;
  }
};

}  // namespace

TEST_CASE("a backfill dry run counts the slots each reprocess mode takes, per workflow") {
  BackfillWorld w;
  w.store("a", kStart, SlotStatus::kFailure);
  w.store("a", kStart + hours(1), SlotStatus::kSuccess);
  w.store("a", kStart + hours(2), SlotStatus::kRunning, "job-x");
  auto r = w.request("a,b", kStart, kStart + hours(10));
  r.dry_run = true;
  auto missing = w.backfills().create(r);
  REQUIRE(missing);
  CHECK_FALSE(missing->id);
  CHECK(missing->workflows == std::map<std::string, std::size_t>{{"a", 7}, {"b", 10}});
  CHECK(missing->slots == 17);
  r.reprocess = Reprocess::kFailed;
  CHECK(w.backfills().create(r)->slots == 1);
  r.reprocess = Reprocess::kAll;
  CHECK(w.backfills().create(r)->slots == 19);
  r.workflows = "*";
  CHECK(w.backfills().create(r)->workflows.size() == 2);
  CHECK(w.backfills().list()->empty());  // a dry run stores nothing
}

TEST_CASE("bad backfill requests are refused naming the field, and nothing is created") {
  BackfillWorld w;
  auto unknown = w.backfills().create(w.request("a,nope", kStart, kStart + hours(2)));
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code == ErrorCode::kInvalid);
  CHECK(unknown.error().message == "parameter workflows: unknown workflow \"nope\"");
  auto glob = w.backfills().create(w.request("x*", kStart, kStart + hours(2)));
  CHECK(glob.error().message == "parameter workflows: no workflow matches \"x*\"");
  auto inverted = w.backfills().create(w.request("a", kStart + hours(2), kStart));
  CHECK(inverted.error().message.find("parameters start and end") == 0);
  auto absurd = w.backfills().create(w.request("a", kStart - hours(24 * 366 * 11), kStart));
  CHECK(absurd.error().message.find("over 10 years") != std::string::npos);
  auto big = w.request("a,b", kStart, kStart + hours(24 * 10));
  big.max_slots = 300;
  auto too_many = w.backfills().create(big);
  CHECK(too_many.error().message.find("more than 300 slots") != std::string::npos);
  CHECK(w.backfills().list()->empty());
}

TEST_CASE("a plan with maxRunning 1 runs its slots strictly oldest first over its workflows") {
  BackfillWorld w;
  auto r = w.request("a,b", kStart, kStart + hours(2));
  r.max_running = 1;
  const std::string id = w.create(r);
  for (int i = 0; i < 20; ++i) w.step_and_finish();
  const std::vector<SlotId> order = {
      {"a", kStart}, {"b", kStart}, {"a", kStart + hours(1)}, {"b", kStart + hours(1)}};
  CHECK(w.service->submitted == order);
  CHECK(w.state("a", kStart).backfill == id);  // the slot record names its plan
  const BackfillPlan plan = w.plan(id);
  CHECK(plan.state == BackfillState::kDone);
  CHECK(plan.ended.at(SlotStatus::kSuccess) == 4);
  auto progress = w.backfills().progress(plan, kBackfillNow);
  CHECK(progress->slots.at("SUCCESS") == 4);
  CHECK(progress->slots.at("PENDING") == 0);
}

TEST_CASE("newest order admits the latest slots first") {
  BackfillWorld w;
  auto r = w.request("a", kStart, kStart + hours(3));
  r.max_running = 1;
  r.order = BackfillOrder::kNewest;
  w.create(r);
  for (int i = 0; i < 20; ++i) w.step_and_finish();
  CHECK(w.service->submitted ==
        std::vector<SlotId>{{"a", kStart + hours(2)}, {"a", kStart + hours(1)}, {"a", kStart}});
}

TEST_CASE("a backfill slot waits while a live slot of its workflow takes the capacity") {
  BackfillWorld w;
  w.create(w.request("a", kStart, kStart + hours(1)));
  REQUIRE(w.scheduler.rerun("a", kBackfillNow - hours(2), kBackfillNow));  // a live rerun by hand
  w.scheduler.step(
      kBackfillNow);  // the live one becomes READY; after the step the plan admits its slot
  w.scheduler.step(kBackfillNow);  // which becomes READY
  REQUIRE(w.status("a", kStart) == SlotStatus::kReady);
  w.scheduler.step(kBackfillNow);  // the live one takes the one place
  REQUIRE(w.service->submitted == std::vector<SlotId>{{"a", kBackfillNow - hours(2)}});
  w.scheduler.step(kBackfillNow);  // and holds it while it runs
  CHECK(w.status("a", kStart) == SlotStatus::kReady);
  w.service->set_status("job-1", ExternalStatus::kSuccess);
  w.scheduler.step(kBackfillNow);  // the live slot ends
  w.scheduler.step(kBackfillNow);
  CHECK(w.service->submitted.back() == SlotId{"a", kStart});
}

TEST_CASE("pause stops a plan's submissions, resume goes on, cancel kills what had not started") {
  BackfillWorld w;
  auto r = w.request("a", kStart, kStart + hours(4));
  r.max_running = 2;
  const std::string id = w.create(r);
  w.scheduler.step(kBackfillNow);  // admits 2 after the step (the live slots go first)
  w.scheduler.step(kBackfillNow);  // both READY
  REQUIRE(w.backfills().act(id, BackfillAction::kPause, kBackfillNow)->plan.state ==
          BackfillState::kPaused);
  w.scheduler.step(kBackfillNow);
  CHECK(w.service->submitted.empty());
  REQUIRE(w.backfills().act(id, BackfillAction::kResume, kBackfillNow));
  w.scheduler.step(kBackfillNow);
  CHECK(w.service->submitted == std::vector<SlotId>{{"a", kStart}});
  auto cancelled = w.backfills().act(id, BackfillAction::kCancel, kBackfillNow);
  REQUIRE(cancelled);
  CHECK(cancelled->plan.state == BackfillState::kCancelled);
  REQUIRE(cancelled->killed.size() == 1);  // the READY one; the RUNNING one finishes
  CHECK(w.status("a", kStart + hours(1)) == SlotStatus::kKilled);
  CHECK(w.status("a", kStart) == SlotStatus::kRunning);
  w.step_and_finish();
  w.scheduler.step(kBackfillNow);
  CHECK(w.service->submitted.size() == 1);
  CHECK(w.status("a", kStart + hours(2)) == SlotStatus::kWaiting);  // never admitted
  auto again = w.backfills().act(id, BackfillAction::kResume, kBackfillNow);
  REQUIRE(again);
  CHECK(again->conflict == "backfill " + id + " is cancelled");
}

TEST_CASE("a crash between a plan's slot writes and its record admits no slot twice") {
  BackfillWorld w;
  auto r = w.request("a", kStart, kStart + hours(2));
  r.max_running = 1;
  r.reprocess = Reprocess::kAll;
  const std::string id = w.create(r);
  const std::string before = backfill_to_json(w.plan(id));
  for (int i = 0; i < 10 && w.status("a", kStart) != SlotStatus::kSuccess; ++i) {
    w.step_and_finish();  // admits, submits, ends a@00:00
  }
  REQUIRE(w.status("a", kStart) == SlotStatus::kSuccess);
  // As if the plan's record had never been written after admitting a@00:00.
  REQUIRE(w.db->put_backfill_record(id, before));
  for (int i = 0; i < 20; ++i) w.step_and_finish();
  CHECK(w.service->submitted == std::vector<SlotId>{{"a", kStart}, {"a", kStart + hours(1)}});
  CHECK(w.plan(id).state == BackfillState::kDone);
  CHECK(w.plan(id).ended.at(SlotStatus::kSuccess) == 2);
}

TEST_CASE("a rerun by hand takes a slot out of its plan, plan records round-trip") {
  SlotState s = SlotState::of({"a", kStart}, SlotStatus::kFailure);
  s.backfill = "bf-1";
  CHECK_FALSE(s.rerun()->backfill);
  BackfillPlan plan;
  plan.id = "bf-20150913T000000-abcdef";
  plan.workflows = {"a", "b"};
  plan.cursors["a"] = kStart;
  plan.in_flight = {{"b", kStart}};
  plan.ended[SlotStatus::kFailure] = 3;
  plan.finished = kBackfillNow;
  auto back = backfill_from_json(backfill_to_json(plan));
  REQUIRE(back);
  CHECK(backfill_to_json(*back) == backfill_to_json(plan));
  CHECK(backfill_from_json("{\"id\":1}").error().code == ErrorCode::kCorrupt);
}
