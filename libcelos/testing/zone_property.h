// The property of schedules in local time (issue 26), shared by the sampled unit test
// (model/zoned_schedule_property_test.cc) and the full run (bench/zones/): for every zone,
// around every offset change of a range of years (and one ordinary day a year), every cron
// expression of a corpus and every DST rule, the slots ZonedCronSchedule yields are exactly those
// an independent reference computes (no slot lost, none doubled), and each slot's local time
// matches the expression (moved by the gap for "shift").
//
// The reference uses only TimeZone::at(): a local time L maps to the instants L - o, for each
// offset o in force near L, whose own offset is o. None is a gap, two an overlap.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace celos::testing {

// At least 200 expressions: the docs' and quickstart's, Quartz's documented examples, fixed
// times in every hour (where transitions happen), lists, ranges and intervals.
std::vector<std::string> zone_property_corpus();

struct ZonePropertyOptions {
  std::vector<std::string> zones;
  std::vector<std::string> expressions;
  int first_year = 1970;
  int last_year = 2037;  // inclusive
};

struct ZonePropertyReport {
  std::size_t windows = 0;  // (zone, window, expression, rule) combinations checked
  std::size_t slots = 0;
  std::vector<std::string> failures;  // the first few, each naming zone, expression and window
};

ZonePropertyReport check_zoned_schedules(const ZonePropertyOptions& options);

}  // namespace celos::testing
