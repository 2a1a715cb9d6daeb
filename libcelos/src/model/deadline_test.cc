// Deadline rules and states (celos/deadline.h).
#include "celos/deadline.h"

#include <catch2/catch.hpp>

#include "celos/workflow.h"

namespace celos {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

const Time kDeadlineSlot = make_time(2026, 3, 28, 22, 0);

}  // namespace

TEST_CASE("ISO 8601 durations of days, hours, minutes and seconds are read") {
  CHECK(parse_iso_duration("PT3H").value() == hours(3));
  CHECK(parse_iso_duration("PT90M").value() == minutes(90));
  CHECK(parse_iso_duration("P1DT2H30M").value() == hours(26) + minutes(30));
  CHECK(parse_iso_duration("PT45S").value() == seconds(45));
  CHECK(parse_iso_duration("P2D").value() == hours(48));
  CHECK(parse_iso_duration("PT0S").value() == seconds(0));
}

TEST_CASE("a negative, fractional, empty or calendar duration is an error quoting it") {
  for (const char* bad : {"-PT1H", "PT", "P", "3H", "PT1.5H", "P1M", "P1W", "P1Y", "PT1H2H",
                          "PT1M1H", "PTH", "PT3", "P1DT", ""}) {
    INFO(bad);
    auto d = parse_iso_duration(bad);
    REQUIRE_FALSE(d);
    CHECK_THAT(d.error().message, Catch::Contains(std::string("\"") + bad + "\""));
  }
  CHECK_THAT(parse_iso_duration("-PT1H").error().message, Catch::Contains("sign"));
}

TEST_CASE("times of day are HH:MM or HH:MM:SS") {
  CHECK(parse_time_of_day("06:00").value() == hours(6));
  CHECK(parse_time_of_day("23:59:59").value() == hours(23) + minutes(59) + seconds(59));
  for (const char* bad : {"24:00", "6:00", "06:60", "06-00", "06:00:", "aa:bb", ""}) {
    INFO(bad);
    CHECK_FALSE(parse_time_of_day(bad));
  }
}

TEST_CASE("a deadline after the slot time adds the duration") {
  DeadlineRule rule;
  rule.after = hours(3);
  CHECK(deadline_of(rule, kDeadlineSlot).value() == kDeadlineSlot + hours(3));
}

TEST_CASE("a deadline at a UTC time of day falls on the slot's date plus dayOffset days") {
  DeadlineRule rule;
  rule.at = hours(6);
  CHECK(deadline_of(rule, kDeadlineSlot).value() == make_time(2026, 3, 28, 6, 0));
  rule.day_offset = 1;
  CHECK(deadline_of(rule, kDeadlineSlot).value() == make_time(2026, 3, 29, 6, 0));
}

TEST_CASE("a deadline at a local time follows the zone's offset, its gaps and overlaps") {
  DeadlineRule rule;
  rule.at = hours(6);
  rule.time_zone = "Europe/Paris";
  rule.day_offset = 1;
  // 2026-03-28T22:00Z is 23:00 in Paris on the 28th; the 29th is the spring-forward day (UTC+2).
  CHECK(deadline_of(rule, kDeadlineSlot).value() == make_time(2026, 3, 29, 4, 0));
  // 23:30Z on the 28th is already the 29th in Paris (00:30 local): 06:00 on the 30th.
  CHECK(deadline_of(rule, kDeadlineSlot + minutes(90)).value() == make_time(2026, 3, 30, 4, 0));
  rule.at = hours(2) + minutes(30);  // skipped on the 29th: moved later by the gap
  CHECK(deadline_of(rule, kDeadlineSlot).value() == make_time(2026, 3, 29, 1, 30));
  rule.day_offset = 0;
  rule.at = hours(2) + minutes(30);  // 2026-10-25 02:30 happens twice: the first one (CEST)
  CHECK(deadline_of(rule, make_time(2026, 10, 24, 23, 0)).value() ==
        make_time(2026, 10, 25, 0, 30));
}

TEST_CASE("an unknown time zone or a negative day offset is refused naming it") {
  DeadlineRule rule;
  rule.at = hours(6);
  rule.time_zone = "Mars/Olympus";
  CHECK_THAT(validate_deadline_rule(rule).error().message, Catch::Contains("Mars/Olympus"));
  CHECK_FALSE(deadline_of(rule, kDeadlineSlot));
  rule.time_zone = "UTC";
  rule.day_offset = -1;
  CHECK_THAT(validate_deadline_rule(rule).error().message, Catch::Contains("dayOffset"));
}

TEST_CASE("a stored deadline wins over the workflow's rule") {
  Workflow wf;
  wf.id = "wf";
  SlotState slot = SlotState::waiting(SlotId{"wf", kDeadlineSlot});
  CHECK_FALSE(effective_deadline(wf, slot));
  wf.deadline = DeadlineRule{};
  wf.deadline->after = hours(1);
  CHECK(effective_deadline(wf, slot) == kDeadlineSlot + hours(1));
  slot.deadline = kDeadlineSlot + hours(5);
  CHECK(effective_deadline(wf, slot) == kDeadlineSlot + hours(5));
}

TEST_CASE("deadline states follow the slot, the time and the forecast") {
  const Time deadline = kDeadlineSlot + hours(3);
  SlotState s = SlotState::waiting(SlotId{"wf", kDeadlineSlot});
  DeadlineForecast none;
  DeadlineForecast late{deadline + minutes(1), "late"};
  DeadlineForecast early{deadline - minutes(1), "early"};
  CHECK(deadline_state_at(s, deadline, kDeadlineSlot, none) == DeadlineState::kPending);
  CHECK(deadline_state_at(s, deadline, kDeadlineSlot, early) == DeadlineState::kPending);
  CHECK(deadline_state_at(s, deadline, kDeadlineSlot, late) == DeadlineState::kAtRisk);
  CHECK(deadline_state_at(s, deadline, deadline, early) == DeadlineState::kMissed);
  s.status = SlotStatus::kSuccess;
  CHECK(deadline_state_at(s, deadline, deadline + hours(9), none) == DeadlineState::kMet);
  s.deadline_state = DeadlineState::kMissed;  // it succeeded after the deadline
  CHECK(deadline_state_at(s, deadline, deadline + hours(9), none) == DeadlineState::kMissed);
  s.deadline_state.reset();
  s.status = SlotStatus::kFailure;
  CHECK(deadline_state_at(s, deadline, kDeadlineSlot, none) == DeadlineState::kMissed);
  s.status = SlotStatus::kKilled;
  CHECK_FALSE(deadline_state_at(s, deadline, deadline + hours(1), none));
}

TEST_CASE("deadline state names round-trip") {
  for (auto s : {DeadlineState::kPending, DeadlineState::kAtRisk, DeadlineState::kMet,
                 DeadlineState::kMissed}) {
    CHECK(parse_deadline_state(to_string(s)).value() == s);
  }
  CHECK_FALSE(parse_deadline_state("LATE"));
}

}  // namespace celos
