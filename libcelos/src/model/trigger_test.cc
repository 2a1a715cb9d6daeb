#include "celos/trigger.h"

#include <map>

#include <catch2/catch.hpp>

using namespace celos;

namespace {

// A context with a fixed set of existing paths and successful slots.
class StubContext : public TriggerContext {
 public:
  Time now_value = make_time(2015, 9, 14, 12);
  std::map<std::string, bool> paths;  // fs + path -> exists
  std::vector<std::pair<std::string, Time>> successes;
  bool down = false;
  int checks = 0;

  Time now() const override { return now_value; }
  Result<bool> path_exists(const std::string& fs, const std::string& path) override {
    ++checks;
    if (down) return fail("namenode down");
    return paths.count(fs + path) > 0;
  }
  Result<bool> slot_succeeded(const std::string& wf, Time t) override {
    for (auto& [w, time] : successes)
      if (w == wf && time == t) return true;
    return false;
  }
};

const Time kTriggerSlot = make_time(2015, 9, 14, 11);

}  // namespace

TEST_CASE("the always trigger is always ready") {
  StubContext c;
  auto s = make_always_trigger()->evaluate(kTriggerSlot, c);
  REQUIRE(s);
  CHECK(s->ready);
  CHECK(s->type == "AlwaysTrigger");
}

TEST_CASE("the delay trigger is ready strictly after slot plus delay") {
  StubContext c;
  auto t = make_delay_trigger(3600);
  c.now_value = kTriggerSlot + std::chrono::hours(1);
  auto s = t->evaluate(kTriggerSlot, c);
  REQUIRE(s);
  CHECK_FALSE(s->ready);
  CHECK(s->description == "Delayed until 2015-09-14T12:00:00.000Z");
  c.now_value += std::chrono::milliseconds(1);
  CHECK(t->evaluate(kTriggerSlot, c)->ready);
}

TEST_CASE("the hdfs check trigger replaces time variables and reports the path") {
  StubContext c;
  c.paths["hdfs://nn/logs/2015-09-14/1100/_READY"] = true;
  auto t = make_hdfs_check_trigger("/logs/${year}-${month}-${day}/${hour}00/_READY", "hdfs://nn");
  auto s = t->evaluate(kTriggerSlot, c);
  REQUIRE(s);
  CHECK(s->ready);
  CHECK(s->type == "HDFSCheckTrigger");
  CHECK(s->description == "HDFS path hdfs://nn/logs/2015-09-14/1100/_READY is ready");
  auto other = t->evaluate(kTriggerSlot + std::chrono::hours(1), c);
  CHECK_FALSE(other->ready);
  CHECK(other->description == "HDFS path hdfs://nn/logs/2015-09-14/1200/_READY is not ready");
}

TEST_CASE("an unreachable file system is an error, not a not-ready") {
  StubContext c;
  c.down = true;
  auto s = make_hdfs_check_trigger("/x", "hdfs://nn")->evaluate(kTriggerSlot, c);
  REQUIRE_FALSE(s);
  CHECK_THAT(s.error().message, Catch::Contains("namenode down"));
}

TEST_CASE("the offset trigger evaluates its trigger for the shifted slot") {
  StubContext c;
  c.paths["/in/12"] = true;
  auto t = make_offset_trigger(3600, make_hdfs_check_trigger("/in/${hour}", ""));
  auto s = t->evaluate(kTriggerSlot, c);
  REQUIRE(s);
  CHECK(s->ready);
  CHECK(s->type == "OffsetTrigger");
  REQUIRE(s->sub_statuses.size() == 1);
  CHECK(s->sub_statuses[0].description == "HDFS path /in/12 is ready");
}

TEST_CASE("and, or and not combine and show every nested status") {
  StubContext c;
  auto yes = make_always_trigger();
  auto no = make_not_trigger(make_always_trigger());
  auto both = make_and_trigger({yes, no})->evaluate(kTriggerSlot, c);
  CHECK_FALSE(both->ready);
  CHECK(both->description == "Not all nested triggers are ready");
  CHECK(both->sub_statuses.size() == 2);
  CHECK(make_or_trigger({no, yes})->evaluate(kTriggerSlot, c)->ready);
  CHECK(make_and_trigger({})->evaluate(kTriggerSlot, c)->ready);
  CHECK_FALSE(make_or_trigger({})->evaluate(kTriggerSlot, c)->ready);
  auto n = no->evaluate(kTriggerSlot, c);
  CHECK(n->type == "NotTrigger");
  CHECK_FALSE(n->ready);
}

TEST_CASE("the success trigger looks at the same slot of the other workflow") {
  StubContext c;
  c.successes.push_back({"upstream", kTriggerSlot});
  auto t = make_success_trigger("upstream");
  CHECK(t->evaluate(kTriggerSlot, c)->ready);
  auto later = t->evaluate(kTriggerSlot + std::chrono::hours(1), c);
  CHECK_FALSE(later->ready);
  CHECK(later->type == "SuccessTrigger");
}
