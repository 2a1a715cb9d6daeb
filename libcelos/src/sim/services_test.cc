// The simulated services keep the contracts of the interfaces they stand behind.
#include "sim/services.h"

#include <catch2/catch.hpp>

#include "testing/state_db_contract.h"

namespace {

using namespace celos;
using namespace celos::sim;
using std::chrono::hours;
using std::chrono::minutes;

const Time kT = make_time(2015, 9, 13, 1);

TEST_CASE("The in-memory state database keeps the state database contract") {
  auto db = make_memory_state_database();
  celos::testing::check_state_database_contract(*db);
}

TEST_CASE("The simulated file systems share one namespace and go down by URI") {
  ManualClock clock(kT);
  const std::vector<OutageSpec> specs = {{"outages[0]", "", "hdfs://*", kT, kT + hours(1)}};
  Outages outages(specs, clock);
  SimFileSystems fs(outages);
  REQUIRE(fs.store().write("/in/2015/_READY", ""));
  auto local = fs.resolve("file:///");
  auto hdfs = fs.resolve("hdfs://nn:8020");
  REQUIRE(local);
  REQUIRE(hdfs);
  CHECK((*local)->exists("/in/2015/_READY").value());
  CHECK((*local)->exists("/in/2015").value());
  CHECK_FALSE((*local)->exists("/in/20").value());
  auto down = (*hdfs)->exists("/in/2015/_READY");
  REQUIRE_FALSE(down);
  CHECK(down.error().code == ErrorCode::kUnavailable);
  CHECK(down.error().message.find("simulated outage (outages[0])") != std::string::npos);
  clock.set_wall(kT + hours(1));
  CHECK((*hdfs)->exists("/in/2015/_READY").value());
  REQUIRE((*local)->remove("/in"));
  CHECK_FALSE((*local)->exists("/in/2015/_READY").value());
}

TEST_CASE("A simulated job runs for its duration and fails on the attempts it is told to") {
  ManualClock clock(kT);
  Outages outages({}, clock);
  JobSpec job{"jobs[0]", "*", Seconds(600), {1}};
  auto service = make_sim_service("wc", nullptr, job, clock, outages);
  const SlotId slot{"wc", kT};
  auto first = service->submit(slot);
  REQUIRE(first);
  CHECK(*first == "sim-1");
  CHECK(service->status(slot, *first).value() == JobState::kSubmitted);
  REQUIRE(service->start(slot, *first));
  clock.set_wall(kT + minutes(9));
  CHECK(service->status(slot, *first).value() == JobState::kRunning);
  clock.set_wall(kT + minutes(10));
  CHECK(service->status(slot, *first).value() == JobState::kFailure);
  auto second = service->submit(slot);
  REQUIRE(service->start(slot, *second));
  clock.set_wall(kT + minutes(20));
  CHECK(service->status(slot, *second).value() == JobState::kSuccess);
  auto third = service->submit(slot);
  REQUIRE(service->start(slot, *third));
  REQUIRE(service->kill(slot, *third));
  CHECK(service->status(slot, *third).value() == JobState::kFailure);
}

TEST_CASE("A failure rate draws the same outcomes whatever the order of the calls") {
  JobSpec job{"jobs[0]", "*", Seconds(0), {}, {}, 0.3, 42};
  int failed = 0;
  for (int h = 0; h < 1000; ++h) {
    const Time t = kT + hours(h);
    const bool a = attempt_fails(job, "wc", t, 1);
    CHECK(a == attempt_fails(job, "wc", t, 1));
    failed += a ? 1 : 0;
  }
  CHECK(failed > 240);
  CHECK(failed < 360);
  job.seed = 43;
  int same = 0;
  for (int h = 0; h < 100; ++h) {
    JobSpec other = job;
    other.seed = 42;
    same +=
        attempt_fails(job, "wc", kT + hours(h), 1) == attempt_fails(other, "wc", kT + hours(h), 1);
  }
  CHECK(same < 100);  // another seed, other draws
}

TEST_CASE("A service outage makes calls unreachable, by kind or endpoint") {
  ManualClock clock(kT);
  const std::vector<OutageSpec> specs = {{"outages[0]", "command", "", kT, kT + hours(1)}};
  Outages outages(specs, clock);
  CHECK_FALSE(outages.service_down("command", "").empty());
  CHECK(outages.service_down("oozie", "http://oozie:11000/oozie").empty());
  auto service = make_sim_service("wc", nullptr, JobSpec{}, clock, outages);
  CHECK(service->submit({"wc", kT}));  // kind "sim" when nothing real stands behind it
}

}  // namespace
