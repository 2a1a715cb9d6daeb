// Scheduler stories: the real scheduler wired to fakes, stepped at chosen times.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "testing/scheduler_world.h"

using namespace celos;
using celos::testing::FakeExternalService;
using celos::testing::FakeFileSystemResolver;
using celos::testing::MemFileSystem;
using World = celos::testing::SchedulerWorld;
using celos::testing::kStart;
using std::chrono::hours;
using std::chrono::minutes;

TEST_CASE("a slot goes from waiting to ready to running to success over three steps") {
  World w;
  w.add("wf");
  const Time now = kStart + hours(1) + minutes(5);  // one slot: 00:00
  auto r1 = w.scheduler.step(now);
  CHECK(r1.errors.empty());
  CHECK(w.status("wf", kStart) == SlotStatus::kReady);
  CHECK(w.service->submitted.empty());

  w.scheduler.step(now);
  CHECK(w.status("wf", kStart) == SlotStatus::kRunning);
  REQUIRE(w.service->submitted.size() == 1);
  CHECK(w.service->submitted[0] == SlotId{"wf", kStart});
  CHECK(w.service->started == std::vector<std::string>{"job-1"});
  CHECK(w.db->get_slot({"wf", kStart}).value()->external_id == "job-1");

  w.scheduler.step(now);
  CHECK(w.status("wf", kStart) == SlotStatus::kRunning);  // the job still runs
  w.service->set_status("job-1", ExternalStatus::kSuccess);
  w.scheduler.step(now);
  CHECK(w.status("wf", kStart) == SlotStatus::kSuccess);
}

TEST_CASE("a slot with nothing stored is not written until it changes") {
  World w;
  w.add("wf", make_not_trigger(make_always_trigger()));
  w.scheduler.step(kStart + hours(3));
  CHECK(w.db_fs->files().empty());
}

TEST_CASE("a failing job is retried up to maxRetryCount and then fails") {
  World w;
  w.add("wf").max_retry_count = 2;
  const Time now = kStart + minutes(30);
  for (int attempt = 1; attempt <= 3; ++attempt) {
    w.scheduler.step(now);  // WAITING -> READY
    w.scheduler.step(now);  // READY -> RUNNING
    w.service->set_status(fmt::format("job-{}", attempt), ExternalStatus::kFailure);
    w.scheduler.step(now);  // RUNNING -> WAITING (retry) or FAILURE
    auto s = w.db->get_slot({"wf", kStart}).value();
    if (attempt < 3) {
      CHECK(s->status == SlotStatus::kWaiting);
      CHECK(s->retry_count == attempt);
    } else {
      CHECK(s->status == SlotStatus::kFailure);
      CHECK(s->retry_count == 2);
    }
  }
  CHECK(w.service->submitted.size() == 3);
}

TEST_CASE("a slot waiting longer than waitTimeoutSeconds times out") {
  World w;
  w.add("wf", make_hdfs_check_trigger("/never", "")).wait_timeout_seconds = 3600;
  w.scheduler.step(kStart + minutes(59));
  CHECK(w.status("wf", kStart) == SlotStatus::kWaiting);
  w.scheduler.step(kStart + hours(1) + minutes(1));
  CHECK(w.status("wf", kStart) == SlotStatus::kWaitTimeout);
}

TEST_CASE("the serial strategy runs the oldest ready slots up to its concurrency") {
  World w;
  w.add("wf").strategy = make_serial_strategy(2);
  const Time now = kStart + hours(4);  // slots 00, 01, 02, 03
  w.scheduler.step(now);
  w.scheduler.step(now);
  REQUIRE(w.service->submitted.size() == 2);
  CHECK(w.service->submitted[0].time == kStart);
  CHECK(w.service->submitted[1].time == kStart + hours(1));
  w.scheduler.step(now);
  CHECK(w.service->submitted.size() == 2);  // both still running
  w.service->set_status("job-1", ExternalStatus::kSuccess);
  w.scheduler.step(now);  // job-1 done: one slot free, picked on the next step
  w.scheduler.step(now);
  REQUIRE(w.service->submitted.size() == 3);
  CHECK(w.service->submitted[2].time == kStart + hours(2));
}

TEST_CASE("the step looks at seven days and never before the start time") {
  World w;
  w.add("wf").start_time = kStart + hours(2);
  const Time now = kStart + hours(24 * 10) + minutes(1);
  w.scheduler.step(now);
  auto slots = w.db->get_slots("wf", kStart, now);
  REQUIRE(slots);
  CHECK(slots->size() == 24 * 7);
  CHECK(slots->front().id.time == now - minutes(1) - hours(24 * 7) + hours(1));
}

TEST_CASE("a rerun slot outside the window is stepped again, and its marker expires") {
  World w;
  w.add("wf");
  const Time old_slot = kStart + hours(5);
  const Time now = kStart + hours(24 * 30);
  REQUIRE(w.db->put_slots({SlotState::of({"wf", old_slot}, SlotStatus::kSuccess, "job-0")}));
  auto rerun = w.scheduler.rerun("wf", old_slot, now);
  REQUIRE(rerun);
  CHECK(rerun->status == SlotStatus::kWaiting);
  w.scheduler.step(now);
  CHECK(w.status("wf", old_slot) == SlotStatus::kReady);
  w.scheduler.step(now);
  CHECK(w.status("wf", old_slot) == SlotStatus::kRunning);
  // While the slot is not final its marker keeps it in view (SPEC §16), however old.
  w.scheduler.step(now + hours(24 * 15));
  auto markers = w.db->rerun_times("wf", now + hours(24 * 15));
  REQUIRE(markers);
  CHECK(*markers == std::vector<Time>{old_slot});
  // Once final, the marker expires 14 days after it was written.
  w.service->set_status("job-1", ExternalStatus::kSuccess);
  w.scheduler.step(now + hours(24 * 16));
  CHECK(w.status("wf", old_slot) == SlotStatus::kSuccess);
  markers = w.db->rerun_times("wf", now + hours(24 * 16));
  REQUIRE(markers);
  CHECK(markers->empty());
}

TEST_CASE("rerun and kill refuse illegal transitions and change nothing") {
  World w;
  w.add("wf");
  const Time now = kStart + hours(3);
  REQUIRE(w.db->put_slots({SlotState::of({"wf", kStart}, SlotStatus::kRunning, "job-9")}));
  auto rerun = w.scheduler.rerun("wf", kStart, now);
  REQUIRE_FALSE(rerun);
  CHECK(rerun.error().code == ErrorCode::kInvalid);
  CHECK(w.status("wf", kStart) == SlotStatus::kRunning);
  CHECK(w.db->rerun_times("wf", now).value().empty());

  REQUIRE(w.db->put_slots({SlotState::of({"wf", kStart + hours(1)}, SlotStatus::kSuccess, "j")}));
  auto kill = w.scheduler.kill("wf", kStart + hours(1));
  REQUIRE_FALSE(kill);
  CHECK(kill.error().code == ErrorCode::kInvalid);
  CHECK(w.service->killed.empty());
}

TEST_CASE("rerun and kill of an unknown workflow or a time off the schedule are not found") {
  World w;
  w.add("wf");
  CHECK(w.scheduler.rerun("nope", kStart, kStart).error().code == ErrorCode::kNotFound);
  CHECK(w.scheduler.kill("wf", kStart + minutes(1)).error().code == ErrorCode::kNotFound);
}

TEST_CASE("killing a running slot kills its job and the slot becomes killed") {
  World w;
  w.add("wf");
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);
  w.scheduler.step(now);
  REQUIRE(w.status("wf", kStart) == SlotStatus::kRunning);
  auto killed = w.scheduler.kill("wf", kStart);
  REQUIRE(killed);
  CHECK(killed->status == SlotStatus::kKilled);
  CHECK(w.service->killed == std::vector<std::string>{"job-1"});
  w.scheduler.step(now);
  CHECK(w.status("wf", kStart) == SlotStatus::kKilled);
}

TEST_CASE("a kill that cannot reach the service changes nothing") {
  World w;
  w.add("wf");
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);
  w.scheduler.step(now);
  w.service->set_down(true);
  CHECK_FALSE(w.scheduler.kill("wf", kStart));
  CHECK(w.status("wf", kStart) == SlotStatus::kRunning);
}

TEST_CASE("a paused workflow is skipped entirely") {
  World w;
  w.add("wf");
  REQUIRE(w.scheduler.pause("wf", true));
  CHECK(w.scheduler.is_paused("wf").value());
  w.scheduler.step(kStart + hours(2));
  CHECK(w.status("wf", kStart) == SlotStatus::kWaiting);
  REQUIRE(w.scheduler.pause("wf", false));
  w.scheduler.step(kStart + hours(2));
  CHECK(w.status("wf", kStart) == SlotStatus::kReady);
}

TEST_CASE("a service that throws breaks only its own workflow") {
  World w;
  w.add("bad");
  w.add("good").service = std::make_shared<FakeExternalService>();
  auto throwing = std::make_shared<FakeExternalService>();
  throwing->set_throws(true);
  w.config->workflows["bad"].service = throwing;
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);
  auto report = w.scheduler.step(now);
  CHECK(report.errors.size() == 1);
  CHECK_THAT(report.errors[0], Catch::Contains("bad"));
  CHECK(w.status("good", kStart) == SlotStatus::kRunning);
  CHECK(w.status("bad", kStart) == SlotStatus::kReady);
}

TEST_CASE("when the data file system is down the workflow waits and resumes later") {
  World w;
  w.add("wf", make_hdfs_check_trigger("/in/${hour}", ""));
  REQUIRE(w.data_fs->write("/in/00", "x"));
  w.data_fs->set_down(true);
  auto report = w.scheduler.step(kStart + hours(2));
  CHECK_FALSE(report.errors.empty());
  CHECK(w.status("wf", kStart) == SlotStatus::kWaiting);
  w.data_fs->set_down(false);
  w.scheduler.step(kStart + hours(2));
  CHECK(w.status("wf", kStart) == SlotStatus::kReady);
  CHECK(w.status("wf", kStart + hours(1)) == SlotStatus::kWaiting);
}

TEST_CASE("a path is checked once per slot and step however many triggers name it") {
  World w;
  auto check = make_hdfs_check_trigger("/in/${hour}", "");
  w.add("a", make_and_trigger({check, check, make_offset_trigger(0, check)}));
  w.add("b", check);
  w.scheduler.step(kStart + minutes(30));  // one slot, one distinct path
  CHECK(w.data_fs->exists_calls() == 1);
}

TEST_CASE("a success trigger waits for the upstream slot") {
  World w;
  w.add("up");
  auto& down = w.add("down", make_success_trigger("up"));
  down.schedule = make_dependent_schedule("up");
  const Time now = kStart + minutes(30);
  w.scheduler.step(now);
  CHECK(w.status("down", kStart) == SlotStatus::kWaiting);
  w.scheduler.step(now);
  w.service->set_status("job-1", ExternalStatus::kSuccess);
  w.scheduler.step(now);
  REQUIRE(w.status("up", kStart) == SlotStatus::kSuccess);
  w.scheduler.step(now);
  CHECK(w.status("down", kStart) == SlotStatus::kReady);
}

TEST_CASE("a dependency cycle of schedules is an error of those workflows only") {
  World w;
  w.add("a").schedule = make_dependent_schedule("b");
  w.add("b").schedule = make_dependent_schedule("a");
  w.add("ok");
  auto report = w.scheduler.step(kStart + minutes(30));
  REQUIRE(report.errors.size() == 2);
  CHECK_THAT(report.errors[0], Catch::Contains("cycle"));
  CHECK(w.status("ok", kStart) == SlotStatus::kReady);
}

TEST_CASE("a corrupt state file is reported with its path and affects only its workflow") {
  World w;
  w.add("broken");
  w.add("fine");
  REQUIRE(w.db_fs->write("/db/state/broken/2015-09-13/00:00:00.000Z", "{not json"));
  auto report = w.scheduler.step(kStart + minutes(30));
  REQUIRE(report.errors.size() == 1);
  CHECK_THAT(report.errors[0], Catch::Contains("/db/state/broken/2015-09-13/00:00:00.000Z"));
  CHECK(w.status("fine", kStart) == SlotStatus::kReady);
  CHECK(w.db_fs->read("/db/state/broken/2015-09-13/00:00:00.000Z").value() == "{not json");
}

TEST_CASE("workflow slots lists the window newest first with waiting slots filled in") {
  World w;
  w.add("wf").start_time = kStart + hours(1);
  w.scheduler.step(kStart + hours(2) + minutes(1));
  auto slots = w.scheduler.workflow_slots("wf", kStart, kStart + hours(4));
  REQUIRE(slots);
  REQUIRE(slots->size() == 3);  // 03, 02, 01 (00 is before the start time)
  CHECK(slots->at(0).id.time == kStart + hours(3));
  CHECK(slots->at(0).status == SlotStatus::kWaiting);
  CHECK(slots->at(2).status == SlotStatus::kReady);
}

TEST_CASE("the step restricted to some ids leaves the others alone") {
  World w;
  w.add("a");
  w.add("b");
  w.scheduler.step(kStart + minutes(30), std::set<std::string>{"b"});
  CHECK(w.status("a", kStart) == SlotStatus::kWaiting);
  CHECK(w.status("b", kStart) == SlotStatus::kReady);
}

TEST_CASE("a failure at any file write never leaves a torn or lost state") {
  // Fail the n-th file write for every n that a short story performs; after each failure the
  // database must still read back whole, and a later clean run must reach the same end state.
  for (int n = 1; n <= 12; ++n) {
    World w;
    w.add("a");
    w.add("b").max_retry_count = 1;
    w.db_fs->fail_at_write(n);
    const Time now = kStart + hours(2) + minutes(5);
    for (int step = 0; step < 4; ++step) {
      w.scheduler.step(now);
      for (const char* wf : {"a", "b"}) {
        auto slots = w.db->get_slots(wf, kStart, now);
        REQUIRE(slots);  // every stored file parses
      }
      w.service->set_status("job-1", ExternalStatus::kSuccess);
      w.service->set_status("job-2", ExternalStatus::kSuccess);
    }
    w.db_fs->fail_at_write(0);
    for (int step = 0; step < 6; ++step) {
      w.scheduler.step(now);
      for (auto& [id, status] : w.service->statuses) status = ExternalStatus::kSuccess;
    }
    INFO("failing write " << n);
    for (const char* wf : {"a", "b"}) {
      CHECK(w.status(wf, kStart) == SlotStatus::kSuccess);
      CHECK(w.status(wf, kStart + hours(1)) == SlotStatus::kSuccess);
    }
  }
}

TEST_CASE("a workflow whose RUNNING record cannot be written starts nothing, the others go on") {
  World w;
  w.add("a");
  w.add("b");
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);  // both READY
  w.db_fs->fail_writes_under("/db/state/a/");
  auto report = w.scheduler.step(now);
  CHECK(report.errors.size() == 1);
  CHECK(w.service->submitted.size() == 2);
  CHECK(w.service->started == std::vector<std::string>{"job-2"});  // b's job only
  CHECK(w.status("a", kStart) == SlotStatus::kReady);
  CHECK(w.status("b", kStart) == SlotStatus::kRunning);
  w.db_fs->fail_writes_under("");
  w.scheduler.step(now);
  CHECK(w.service->started == std::vector<std::string>{"job-2", "job-3"});
  CHECK(w.status("a", kStart) == SlotStatus::kRunning);
}

TEST_CASE("a write that fails once is retried workflow by workflow and nothing is lost") {
  World w;
  w.add("a");
  w.add("b");
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);
  w.db_fs->fail_at_write(1);
  auto report = w.scheduler.step(now);
  CHECK(report.errors.empty());
  CHECK(w.service->started.size() == 2);
  CHECK(w.status("a", kStart) == SlotStatus::kRunning);
  CHECK(w.status("b", kStart) == SlotStatus::kRunning);
}
