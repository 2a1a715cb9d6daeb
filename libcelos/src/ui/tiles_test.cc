#include <catch2/catch.hpp>

#include "celos/ui.h"

using namespace celos;
using std::chrono::minutes;

TEST_CASE("zoom defaults to an hour and is clamped to a minute and a day") {
  CHECK(parse_zoom(nullptr).value() == minutes(60));
  const std::string zero = "0", big = "5000", huge = "99999999999999999999", negative = "-3";
  const std::string fifteen = "15";
  CHECK(parse_zoom(&zero).value() == minutes(1));
  CHECK(parse_zoom(&negative).value() == minutes(1));
  CHECK(parse_zoom(&big).value() == minutes(1440));
  CHECK(parse_zoom(&huge).value() == minutes(1440));
  CHECK(parse_zoom(&fifteen).value() == minutes(15));
}

TEST_CASE("a zoom that is not a whole number is invalid") {
  for (std::string bad : {"", "abc", "1.5", "60m", "-", " 60"}) {
    INFO(bad);
    auto zoom = parse_zoom(&bad);
    REQUIRE_FALSE(zoom);
    CHECK(zoom.error().code == ErrorCode::kInvalid);
  }
}

TEST_CASE("there are at most 48 tiles and at most a week of them") {
  CHECK(tile_count(minutes(1)) == 48);
  CHECK(tile_count(minutes(60)) == 48);
  CHECK(tile_count(minutes(210)) == 48);
  CHECK(tile_count(minutes(300)) == 33);
  CHECK(tile_count(minutes(1440)) == 7);
}

TEST_CASE("the newest tile is the latest zoom step from midnight at or before the time") {
  auto grid = make_tile_grid(make_time(2015, 9, 15, 11, 40, 13), minutes(60));
  REQUIRE(grid.starts.size() == 48);
  CHECK(grid.starts.front() == make_time(2015, 9, 15, 11));
  CHECK(grid.starts[1] == make_time(2015, 9, 15, 10));
  CHECK(grid.begin() == make_time(2015, 9, 13, 12));
  CHECK(grid.end() == make_time(2015, 9, 15, 12));

  auto odd = make_tile_grid(make_time(2015, 9, 15, 0, 20), minutes(7));
  CHECK(odd.starts.front() == make_time(2015, 9, 15, 0, 14));

  auto exact = make_tile_grid(make_time(2015, 9, 15, 11, 0), minutes(30));
  CHECK(exact.starts.front() == make_time(2015, 9, 15, 11, 0));
}

TEST_CASE("a day zoom shows seven midnights") {
  auto grid = make_tile_grid(make_time(2015, 9, 15, 23, 59, 59), minutes(1440));
  REQUIRE(grid.starts.size() == 7);
  CHECK(grid.starts.front() == make_time(2015, 9, 15));
  CHECK(grid.starts.back() == make_time(2015, 9, 9));
  for (Time start : grid.starts) CHECK(day_label(start) != "");
}

TEST_CASE("tiles are labelled HHmm and midnight tiles carry the day of month") {
  auto grid = make_tile_grid(make_time(2015, 9, 2, 1, 30), minutes(60));
  CHECK(tile_label(grid.starts[0]) == "0100");
  CHECK(tile_label(grid.starts[1]) == "0000");
  CHECK(day_label(grid.starts[1]) == "02");
  CHECK(tile_label(grid.starts[2]) == "2300");
  CHECK(day_label(grid.starts[2]) == "");
  CHECK(day_label(grid.starts[25]) == "01");
  CHECK(tile_label(make_time(2015, 9, 2, 13, 45)) == "1345");
}

TEST_CASE("slots map to the tile that holds them and nothing outside the grid does") {
  auto grid = make_tile_grid(make_time(2015, 9, 15, 11, 40), minutes(60));
  CHECK(grid.tile_of(make_time(2015, 9, 15, 11, 0)) == 0u);
  CHECK(grid.tile_of(make_time(2015, 9, 15, 11, 59, 59)) == 0u);
  CHECK(grid.tile_of(make_time(2015, 9, 15, 10, 59, 59)) == 1u);
  CHECK(grid.tile_of(make_time(2015, 9, 15, 0, 30)) == 11u);
  CHECK(grid.tile_of(make_time(2015, 9, 14, 23, 30)) == 12u);
  CHECK(grid.tile_of(make_time(2015, 9, 13, 12, 0)) == 47u);
  CHECK_FALSE(grid.tile_of(make_time(2015, 9, 13, 11, 59, 59)));
  CHECK_FALSE(grid.tile_of(make_time(2015, 9, 15, 12, 0)));

  auto days = make_tile_grid(make_time(2015, 9, 15, 11, 40), minutes(1440));
  CHECK(days.tile_of(make_time(2015, 9, 15, 23, 0)) == 0u);
  CHECK(days.tile_of(make_time(2015, 9, 14, 0, 0)) == 1u);
  CHECK(days.tile_of(make_time(2015, 9, 9, 0, 0)) == 6u);
  CHECK_FALSE(days.tile_of(make_time(2015, 9, 8, 23, 59)));
}

TEST_CASE("each state has a word, a class and a place in the severity order") {
  CHECK(state_word(SlotStatus::kWaiting) == "wait");
  CHECK(state_word(SlotStatus::kReady) == "rdy");
  CHECK(state_word(SlotStatus::kRunning) == "run");
  CHECK(state_word(SlotStatus::kSuccess) == "");
  CHECK(state_word(SlotStatus::kFailure) == "fail");
  CHECK(state_word(SlotStatus::kWaitTimeout) == "time");
  CHECK(state_word(SlotStatus::kKilled) == "kill");
  CHECK(state_class(SlotStatus::kWaitTimeout) == "wait_timeout");
  CHECK(state_severity(SlotStatus::kFailure) > state_severity(SlotStatus::kWaitTimeout));
  CHECK(state_severity(SlotStatus::kWaitTimeout) > state_severity(SlotStatus::kKilled));
  CHECK(state_severity(SlotStatus::kKilled) > state_severity(SlotStatus::kWaiting));
  CHECK(state_severity(SlotStatus::kWaiting) > state_severity(SlotStatus::kReady));
  CHECK(state_severity(SlotStatus::kReady) > state_severity(SlotStatus::kRunning));
  CHECK(state_severity(SlotStatus::kRunning) > state_severity(SlotStatus::kSuccess));
  CHECK(parse_ui_status("WAIT_TIMEOUT").value() == SlotStatus::kWaitTimeout);
  CHECK(ui_status_name(SlotStatus::kKilled) == "KILLED");
  CHECK_FALSE(parse_ui_status("DONE"));
}
