#include "celos/slot.h"

#include <catch2/catch.hpp>

#include "celos/workflow.h"

using namespace celos;

namespace {
SlotState in(SlotStatus status) {
  SlotState s = SlotState::waiting({"wf", make_time(2015, 9, 13, 13)});
  s.status = status;
  if (status == SlotStatus::kRunning) s.external_id = "job-1";
  return s;
}
}  // namespace

TEST_CASE("a slot with nothing stored is WAITING with no retries and no external id") {
  const SlotState s = SlotState::waiting({"wf", make_time(2015, 9, 13)});
  CHECK(s.status == SlotStatus::kWaiting);
  CHECK(s.retry_count == 0);
  CHECK_FALSE(s.external_id.has_value());
}

TEST_CASE("statuses print and parse as the state database spells them") {
  for (SlotStatus s :
       {SlotStatus::kWaiting, SlotStatus::kReady, SlotStatus::kRunning, SlotStatus::kSuccess,
        SlotStatus::kFailure, SlotStatus::kWaitTimeout, SlotStatus::kKilled}) {
    CHECK(parse_slot_status(to_string(s)).value() == s);
  }
  CHECK(to_string(SlotStatus::kWaitTimeout) == "WAIT_TIMEOUT");
  CHECK_FALSE(parse_slot_status("DONE").has_value());
}

TEST_CASE("the happy path goes waiting, ready, running, success") {
  auto ready = in(SlotStatus::kWaiting).ready();
  REQUIRE(ready);
  auto running = ready->running("job-7");
  REQUIRE(running);
  CHECK(running->external_id == "job-7");
  auto success = running->success();
  REQUIRE(success);
  CHECK(success->status == SlotStatus::kSuccess);
  CHECK(success->external_id == "job-7");
}

TEST_CASE("a retry goes back to waiting with one more retry and no external id") {
  auto retried = in(SlotStatus::kRunning).retry();
  REQUIRE(retried);
  CHECK(retried->status == SlotStatus::kWaiting);
  CHECK(retried->retry_count == 1);
  CHECK_FALSE(retried->external_id);
}

TEST_CASE("rerun is allowed from final states only and resets the retry count") {
  for (SlotStatus s : {SlotStatus::kSuccess, SlotStatus::kFailure, SlotStatus::kWaitTimeout,
                       SlotStatus::kKilled}) {
    SlotState state = in(s);
    state.retry_count = 3;
    state.external_id = "x";
    auto next = state.rerun();
    REQUIRE(next);
    CHECK(next->status == SlotStatus::kWaiting);
    CHECK(next->retry_count == 0);
    CHECK_FALSE(next->external_id);
  }
  for (SlotStatus s : {SlotStatus::kWaiting, SlotStatus::kReady, SlotStatus::kRunning}) {
    auto next = in(s).rerun();
    REQUIRE_FALSE(next);
    CHECK(next.error().code == ErrorCode::kInvalid);
  }
}

TEST_CASE("kill is allowed from waiting, ready and running only") {
  for (SlotStatus s : {SlotStatus::kWaiting, SlotStatus::kReady, SlotStatus::kRunning}) {
    auto next = in(s).killed();
    REQUIRE(next);
    CHECK(next->status == SlotStatus::kKilled);
  }
  for (SlotStatus s : {SlotStatus::kSuccess, SlotStatus::kFailure, SlotStatus::kWaitTimeout,
                       SlotStatus::kKilled}) {
    auto next = in(s).killed();
    REQUIRE_FALSE(next);
    CHECK_THAT(next.error().message, Catch::Contains("cannot kill"));
  }
}

TEST_CASE("illegal transitions are errors that name the slot and its state") {
  auto next = in(SlotStatus::kSuccess).ready();
  REQUIRE_FALSE(next);
  CHECK_THAT(next.error().message, Catch::Contains("wf@2015-09-13T13:00:00.000Z"));
  CHECK_THAT(next.error().message, Catch::Contains("SUCCESS"));
  CHECK_FALSE(in(SlotStatus::kWaiting).running("x"));
  CHECK_FALSE(in(SlotStatus::kReady).success());
  CHECK_FALSE(in(SlotStatus::kReady).wait_timeout());
}

TEST_CASE("a workflow id is at most 200 bytes, and the error does not print all of it") {
  CHECK(validate_workflow_id(std::string(200, 'w')));
  auto too_long = validate_workflow_id(std::string(201, 'w'));
  REQUIRE_FALSE(too_long);
  CHECK(too_long.error().code == ErrorCode::kInvalid);
  CHECK(too_long.error().message.find("200 bytes") != std::string::npos);
  CHECK(too_long.error().message.size() < 200);
  CHECK_FALSE(validate_workflow_id(std::string(300, 'x') + "\xF0\x9F\x98\x80"));
}
