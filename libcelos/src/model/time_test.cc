#include "celos/time.h"

#include <chrono>
#include <string>

#include <catch2/catch.hpp>

namespace celos {
namespace {

using std::chrono::milliseconds;

// 2015-09-13T13:40:00Z as seconds since the epoch, computed independently (Python's datetime).
constexpr std::int64_t kExampleEpochSeconds = 1442151600;

Time example() { return Time{milliseconds{kExampleEpochSeconds * 1000}}; }

void check_rejected(std::string_view text) {
  INFO(text);
  auto t = parse_time(text);
  REQUIRE_FALSE(t.has_value());
  CHECK(t.error().code == ErrorCode::kInvalid);
  CHECK_THAT(t.error().message, Catch::Contains(std::string(text)));
}

TEST_CASE("make_time counts milliseconds from the Unix epoch in UTC") {
  CHECK(make_time(1970, 1, 1).time_since_epoch().count() == 0);
  CHECK(make_time(2015, 9, 13, 13, 40) == example());
  CHECK(make_time(1969, 7, 20, 20, 17, 40).time_since_epoch() == milliseconds{-14182940000});
  CHECK(make_time(2016, 2, 29, 23, 59, 59, 250).time_since_epoch() == milliseconds{1456790399250});
}

TEST_CASE("parse_time accepts the four UTC forms of the spec") {
  for (const char* text : {"2015-09-13T13:40Z", "2015-09-13T13:40:00Z", "2015-09-13T13:40:00.000Z",
                           "2015-09-13T13:40:00+00:00"}) {
    INFO(text);
    auto t = parse_time(text);
    REQUIRE(t.has_value());
    CHECK(*t == example());
  }
}

TEST_CASE("parse_time keeps seconds and milliseconds") {
  auto t = parse_time("2015-09-13T13:40:07.123Z");
  REQUIRE(t.has_value());
  CHECK(*t == example() + milliseconds{7123});
  auto short_fraction = parse_time("2015-09-13T13:40:07.5Z");
  REQUIRE(short_fraction.has_value());
  CHECK(*short_fraction == example() + milliseconds{7500});
}

TEST_CASE("parse_time rejects other offsets") {
  check_rejected("2015-09-13T13:40:00+01:00");
  check_rejected("2015-09-13T13:40:00-05:00");
  check_rejected("2015-09-13T13:40+02:00");
}

TEST_CASE("parse_time rejects times without a zone") {
  check_rejected("2015-09-13T13:40:00");
  check_rejected("2015-09-13T13:40");
  check_rejected("2015-09-13T13:40:00.000");
}

TEST_CASE("parse_time rejects malformed and impossible times") {
  check_rejected("");
  check_rejected("yesterday");
  check_rejected("2015-09-13");
  check_rejected("2015-09-13 13:40Z");
  check_rejected("2015-02-29T00:00Z");
  check_rejected("2015-13-01T00:00Z");
  check_rejected("2015-09-13T24:00Z");
  check_rejected("2015-09-13T13:60Z");
  check_rejected("2015-09-13T13:40:60Z");
  check_rejected("2015-09-13T13:40:00.Z");
  check_rejected("2015-09-13T13:40:00ZZ");
}

TEST_CASE("parse_time accepts February 29th in a leap year") {
  auto t = parse_time("2016-02-29T00:00Z");
  REQUIRE(t.has_value());
  CHECK(*t == make_time(2016, 2, 29));
}

TEST_CASE("format_time prints milliseconds and a Z") {
  CHECK(format_time(example()) == "2015-09-13T13:40:00.000Z");
  CHECK(format_time(make_time(2015, 1, 2, 3, 4, 5, 7)) == "2015-01-02T03:04:05.007Z");
  CHECK(format_time(make_time(1970, 1, 1)) == "1970-01-01T00:00:00.000Z");
  CHECK(format_time(make_time(9999, 12, 31, 23, 59, 59, 999)) == "9999-12-31T23:59:59.999Z");
  CHECK(format_time(make_time(10000, 1, 1)) == "10000-01-01T00:00:00.000Z");
}

TEST_CASE("format_time_short prints seconds only when the time has any") {
  CHECK(format_time_short(example()) == "2015-09-13T13:40Z");
  CHECK(format_time_short(make_time(2015, 9, 13, 13, 40, 7)) == "2015-09-13T13:40:07Z");
  CHECK(format_time_short(make_time(2015, 9, 13, 13, 40, 0, 5)) == "2015-09-13T13:40:00.005Z");
}

TEST_CASE("format_day and format_time_of_day split a time for the state database") {
  const Time t = make_time(2015, 3, 4, 5, 6, 7, 89);
  CHECK(format_day(t) == "2015-03-04");
  CHECK(format_time_of_day(t) == "05:06:07.089Z");
}

TEST_CASE("Formatted times parse back to the same time") {
  const Time t = make_time(2016, 2, 29, 23, 59, 59, 999);
  auto back = parse_time(format_time(t));
  REQUIRE(back.has_value());
  CHECK(*back == t);
}

TEST_CASE("replace_time_variables zero-pads every field") {
  const Time t = make_time(2015, 3, 4, 5, 6, 7);
  CHECK(replace_time_variables("/logs/${year}-${month}-${day}/${hour}${minute}${second}", t) ==
        "/logs/2015-03-04/050607");
  CHECK(replace_time_variables("${year}", make_time(987, 1, 1)) == "0987");
}

TEST_CASE("replace_time_variables leaves other text alone") {
  const Time t = make_time(2015, 12, 31, 23, 59, 58);
  CHECK(replace_time_variables("no variables", t) == "no variables");
  CHECK(replace_time_variables("${foo} ${hour} $ ${", t) == "${foo} 23 $ ${");
  CHECK(replace_time_variables("${month}${month}", t) == "1212");
  CHECK(replace_time_variables("", t).empty());
}

TEST_CASE("to_civil returns the UTC calendar fields") {
  const CivilTime c = to_civil(make_time(2015, 9, 13, 13, 40, 5, 6));
  CHECK(c.year == 2015);
  CHECK(c.month == 9);
  CHECK(c.day == 13);
  CHECK(c.hour == 13);
  CHECK(c.minute == 40);
  CHECK(c.second == 5);
  CHECK(c.millisecond == 6);
}

TEST_CASE("to_civil and make_time round-trip, before 1970 too") {
  for (const Time t : {make_time(1969, 7, 20, 20, 17, 40), make_time(1969, 12, 31, 23, 59, 59, 999),
                       make_time(2000, 2, 29), make_time(2199, 12, 31, 23, 59, 59, 1)}) {
    const CivilTime c = to_civil(t);
    INFO(format_time(t));
    CHECK(make_time(c.year, c.month, c.day, c.hour, c.minute, c.second, c.millisecond) == t);
  }
  const CivilTime before = to_civil(Time{milliseconds{-1}});
  CHECK(before.year == 1969);
  CHECK(before.month == 12);
  CHECK(before.day == 31);
  CHECK(before.hour == 23);
  CHECK(before.second == 59);
  CHECK(before.millisecond == 999);
}

TEST_CASE("floor_seconds drops the milliseconds") {
  CHECK(floor_seconds(example() + milliseconds{999}) == example());
  CHECK(floor_seconds(example()) == example());
  CHECK(floor_seconds(Time{milliseconds{-1}}) == Time{milliseconds{-1000}});
}

}  // namespace
TEST_CASE("parse_time accepts +00:00 whose plus sign a query string turned into a space") {
  auto t = parse_time("2015-09-13T13:40:00 00:00");
  REQUIRE(t.has_value());
  CHECK(*t == example());
  CHECK_FALSE(parse_time("2015-09-13T13:40:00 01:00").has_value());
}

}  // namespace celos
