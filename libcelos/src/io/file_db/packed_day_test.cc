#include "io/file_db/packed_day.h"

#include <catch2/catch.hpp>

using namespace celos;
using std::chrono::hours;

namespace {

SlotState state(int hour, SlotStatus status, std::optional<std::string> id = {}, int retries = 0) {
  return SlotState::of({"wf", make_time(2015, 9, 15, hour)}, status, std::move(id), retries);
}

std::vector<SlotState> all(const PackedDay& day, const std::string& workflow = "wf") {
  std::vector<SlotState> out;
  day.unpack(workflow, make_time(2015, 9, 15), make_time(2015, 9, 16), out);
  return out;
}

}  // namespace

TEST_CASE("a packed day gives back every state as it was, oldest first") {
  SlotState with_extras = state(5, SlotStatus::kWaiting, "0000009-150916000002047-oozie-oozi-W", 2);
  with_extras.message = "job 0000009 failed";
  with_extras.retry_at = make_time(2015, 9, 15, 7);
  with_extras.consumed["in"] = {make_time(2015, 9, 15, 4)};
  const std::vector<SlotState> states = {
      state(3, SlotStatus::kSuccess, "0000001-150916000002047-oozie-oozi-W"),
      state(1, SlotStatus::kRunning, "0000002-150916000002047-oozie-oozi-W", 1),
      state(2, SlotStatus::kFailure, "0000003-151001000000000-oozie-oozi-W", 3),
      state(4, SlotStatus::kReady),
      with_extras,
      state(6, SlotStatus::kKilled, "12345"),
      state(7, SlotStatus::kWaitTimeout, "-leading-dash"),
      state(8, SlotStatus::kSuccess, "trailing-"),
      state(9, SlotStatus::kSuccess, ""),
  };
  const PackedDay day(states);
  std::vector<SlotState> expected = states;
  std::sort(expected.begin(), expected.end(),
            [](const SlotState& a, const SlotState& b) { return a.id.time < b.id.time; });
  CHECK(day.size() == states.size());
  CHECK(all(day) == expected);
}

TEST_CASE("a packed day unpacks a time range under the asking workflow's id") {
  const PackedDay day({state(1, SlotStatus::kSuccess, "a-x"), state(2, SlotStatus::kSuccess, "b-x"),
                       state(3, SlotStatus::kRunning, "c-y")});
  std::vector<SlotState> out;
  day.unpack("other", make_time(2015, 9, 15, 2), make_time(2015, 9, 15, 3), out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].id == SlotId{"other", make_time(2015, 9, 15, 2)});
  CHECK(out[0].external_id == "b-x");
  out.clear();
  day.unpack("wf", make_time(2015, 9, 16), make_time(2015, 9, 17), out);
  CHECK(out.empty());
}

TEST_CASE("two states of one time keep the first, as the cache always did") {
  const PackedDay day({state(1, SlotStatus::kSuccess, "first"), state(1, SlotStatus::kFailure)});
  REQUIRE(all(day).size() == 1);
  CHECK(all(day)[0].external_id == "first");
}

TEST_CASE("a packed day of Oozie ids keeps each id's shared part once") {
  std::vector<SlotState> states;
  for (int h = 0; h < 24; ++h) {
    states.push_back(state(h, SlotStatus::kSuccess,
                           "00000" + std::to_string(10 + h) + "-150916000002047-oozie-oozi-W"));
  }
  const PackedDay day(states);
  CHECK(all(day) == states);
  // 24 entries, 24 own parts of 7 bytes, one shared part: far below 24 whole states.
  CHECK(day.bytes() < 24 * 48 + 200);
  CHECK(day.bytes() < 24 * sizeof(SlotState) / 3);
}

TEST_CASE("a packed day keeps deadlines and deadline states compactly") {
  std::vector<SlotState> states;
  for (int h = 0; h < 24; ++h) {
    SlotState s = state(h, h % 2 ? SlotStatus::kSuccess : SlotStatus::kRunning,
                        "00000" + std::to_string(10 + h) + "-150916000002047-oozie-oozi-W");
    s.deadline = s.id.time + hours(3);
    if (h % 3 == 1) s.deadline_state = DeadlineState::kMissed;
    if (h % 3 == 2) s.deadline_state = DeadlineState::kAtRisk;
    states.push_back(s);
  }
  states[4].deadline.reset();                                                // a slot stored before
  states[5].deadline = states[5].id.time - hours(24 * 400);                  // far before its slot
  states[6].deadline = states[6].id.time + std::chrono::milliseconds(1500);  // not whole seconds
  const PackedDay day(states);
  CHECK(all(day) == states);
  // The two whole entries aside, 4 bytes more a slot than a day without deadlines.
  CHECK(day.bytes() < 24 * (48 + 4) + 2 * sizeof(SlotState) + 200);
}

TEST_CASE("a packed day of slots without deadlines holds no deadline bytes") {
  PackedDay without({state(1, SlotStatus::kSuccess, "a-x"), state(2, SlotStatus::kRunning, "b-x")});
  SlotState late = state(2, SlotStatus::kRunning, "b-x");
  late.deadline_state = DeadlineState::kMissed;  // a state with no deadline of its own
  PackedDay with_state({state(1, SlotStatus::kSuccess, "a-x"), late});
  CHECK(with_state.bytes() == without.bytes());
  CHECK(all(with_state)[1] == late);
}
