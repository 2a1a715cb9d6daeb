#include "celos/cron.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

// Expected times below were worked out by hand from a calendar (e.g. 2015-08-01 is a Saturday,
// 2015-05-31 a Sunday), never by asking the code under test.

namespace celos {
namespace {

CronExpression cron(std::string_view text) {
  auto c = CronExpression::parse(text);
  INFO(text);
  REQUIRE(c.has_value());
  return *c;
}

std::vector<Time> cron_times(std::string_view text, Time start, Time end) {
  return cron(text).times(start, end);
}

// Days of the month of each time (all expected in one year).
std::vector<int> days(const std::vector<Time>& ts) {
  std::vector<int> out;
  for (Time t : ts) out.push_back(to_civil(t).day);
  return out;
}

std::vector<std::string> formatted(const std::vector<Time>& ts) {
  std::vector<std::string> out;
  for (Time t : ts) out.push_back(format_time(t));
  return out;
}

// The error message of an expression that must not parse.
std::string error_of(std::string_view text) {
  auto c = CronExpression::parse(text);
  INFO(text);
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().code == ErrorCode::kInvalid);
  CHECK_THAT(c.error().message, Catch::Contains(std::string(text)));
  return c.error().message;
}

const Time kYear2015 = make_time(2015, 1, 1);
const Time kYear2016 = make_time(2016, 1, 1);

TEST_CASE("An hourly schedule fires at the top of every hour") {
  auto ts = cron_times("0 0 * * * ?", make_time(2015, 9, 13), make_time(2015, 9, 14));
  REQUIRE(ts.size() == 24);
  CHECK(ts.front() == make_time(2015, 9, 13, 0));
  CHECK(ts.back() == make_time(2015, 9, 13, 23));
  for (std::size_t i = 1; i < ts.size(); ++i) CHECK(ts[i] - ts[i - 1] == std::chrono::hours{1});
}

TEST_CASE("A minutely schedule over a week yields 10080 slots one minute apart") {
  auto ts = cron_times("0 * * * * ?", make_time(2015, 9, 7), make_time(2015, 9, 14));
  REQUIRE(ts.size() == 10080);
  CHECK(ts.front() == make_time(2015, 9, 7));
  CHECK(ts.back() == make_time(2015, 9, 13, 23, 59));
  for (std::size_t i = 1; i < ts.size(); ++i) {
    REQUIRE(ts[i] - ts[i - 1] == std::chrono::minutes{1});
  }
}

TEST_CASE("A daily schedule fires once a day across month and year ends") {
  auto ts = cron_times("0 30 4 * * ?", make_time(2015, 12, 30), make_time(2016, 1, 3));
  CHECK(formatted(ts) ==
        std::vector<std::string>{"2015-12-30T04:30:00.000Z", "2015-12-31T04:30:00.000Z",
                                 "2016-01-01T04:30:00.000Z", "2016-01-02T04:30:00.000Z"});
}

TEST_CASE("A secondly schedule fires every second") {
  auto ts = cron_times("* * * * * ?", make_time(2015, 9, 13), make_time(2015, 9, 14));
  CHECK(ts.size() == 86400);
}

TEST_CASE("February 29th fires only in leap years") {
  auto ts = cron_times("0 0 0 29 FEB ?", make_time(2015, 1, 1), make_time(2026, 1, 1));
  CHECK(ts ==
        std::vector<Time>{make_time(2016, 2, 29), make_time(2020, 2, 29), make_time(2024, 2, 29)});
}

TEST_CASE("L in day-of-month is the last day of each month") {
  auto ts = cron_times("0 0 0 L * ?", kYear2016, make_time(2016, 7, 1));
  CHECK(days(ts) == std::vector<int>{31, 29, 31, 30, 31, 30});
}

TEST_CASE("L-2 is two days before the last day of the month") {
  auto ts = cron_times("0 0 0 L-2 * ?", make_time(2015, 2, 1), make_time(2015, 4, 1));
  CHECK(ts == std::vector<Time>{make_time(2015, 2, 26), make_time(2015, 3, 29)});
  ts = cron_times("0 0 0 L-2 * ?", make_time(2016, 2, 1), make_time(2016, 3, 1));
  CHECK(ts == std::vector<Time>{make_time(2016, 2, 27)});
}

TEST_CASE("W picks the nearest weekday without leaving the month") {
  SECTION("the 15th on a Sunday moves to Monday the 16th") {
    CHECK(cron_times("0 0 0 15W FEB ?", kYear2015, kYear2016) ==
          std::vector<Time>{make_time(2015, 2, 16)});
  }
  SECTION("the 15th on a Saturday moves to Friday the 14th") {
    CHECK(cron_times("0 0 0 15W AUG ?", kYear2015, kYear2016) ==
          std::vector<Time>{make_time(2015, 8, 14)});
  }
  SECTION("the 1st on a Saturday moves forward to Monday the 3rd") {
    CHECK(cron_times("0 0 0 1W AUG ?", kYear2015, kYear2016) ==
          std::vector<Time>{make_time(2015, 8, 3)});
  }
  SECTION("the 31st on a Sunday moves back to Friday the 29th") {
    CHECK(cron_times("0 0 0 31W MAY ?", kYear2015, kYear2016) ==
          std::vector<Time>{make_time(2015, 5, 29)});
  }
  SECTION("a weekday stays put and months without the day are skipped") {
    auto ts = cron_times("0 0 0 31W * ?", make_time(2015, 5, 1), make_time(2015, 9, 1));
    CHECK(ts == std::vector<Time>{make_time(2015, 5, 29), make_time(2015, 7, 31),
                                  make_time(2015, 8, 31)});
  }
}

TEST_CASE("LW is the last weekday of the month") {
  auto ts = cron_times("0 0 0 LW * ?", kYear2015, make_time(2015, 6, 1));
  // Jan 31 Sat, Feb 28 Sat, Mar 31 Tue, Apr 30 Thu, May 31 Sun.
  CHECK(days(ts) == std::vector<int>{30, 27, 31, 30, 29});
}

TEST_CASE("n#k is the k-th given weekday of the month") {
  auto ts = cron_times("0 0 0 ? * 6#3", kYear2015, kYear2016);
  CHECK(days(ts) == std::vector<int>{16, 20, 20, 17, 15, 19, 17, 21, 18, 16, 20, 18});
}

TEST_CASE("#5 fires only in months that have a fifth such weekday") {
  auto ts = cron_times("0 0 0 ? * FRI#5", kYear2015, kYear2016);
  CHECK(ts == std::vector<Time>{make_time(2015, 1, 30), make_time(2015, 5, 29),
                                make_time(2015, 7, 31), make_time(2015, 10, 30)});
}

TEST_CASE("nL in day-of-week is the last given weekday of the month") {
  auto ts = cron_times("0 0 0 ? * 5L", kYear2015, kYear2016);
  CHECK(days(ts) == std::vector<int>{29, 26, 26, 30, 28, 25, 30, 27, 24, 29, 26, 31});
}

TEST_CASE("L alone in day-of-week means Saturday") {
  auto ts = cron_times("0 0 0 ? * L", make_time(2015, 9, 1), make_time(2015, 9, 15));
  CHECK(ts == std::vector<Time>{make_time(2015, 9, 5), make_time(2015, 9, 12)});
}

TEST_CASE("Day-of-week numbers count from 1 = Sunday") {
  // 2015-09-13 is a Sunday.
  auto ts = cron_times("0 0 0 ? * 1,2", make_time(2015, 9, 12), make_time(2015, 9, 20));
  CHECK(ts == std::vector<Time>{make_time(2015, 9, 13), make_time(2015, 9, 14)});
}

TEST_CASE("Hour ranges wrap around midnight") {
  auto ts = cron_times("0 0 22-2 * * ?", make_time(2015, 9, 13), make_time(2015, 9, 14));
  CHECK(ts == std::vector<Time>{make_time(2015, 9, 13, 0), make_time(2015, 9, 13, 1),
                                make_time(2015, 9, 13, 2), make_time(2015, 9, 13, 22),
                                make_time(2015, 9, 13, 23)});
}

TEST_CASE("Month ranges wrap around the new year") {
  auto ts = cron_times("0 0 0 1 NOV-FEB ?", kYear2015, kYear2016);
  CHECK(ts == std::vector<Time>{make_time(2015, 1, 1), make_time(2015, 2, 1),
                                make_time(2015, 11, 1), make_time(2015, 12, 1)});
}

TEST_CASE("Day-of-week ranges wrap around the weekend") {
  // The week of Monday 2015-09-07.
  auto ts = cron_times("0 0 12 ? * FRI-MON", make_time(2015, 9, 7), make_time(2015, 9, 14));
  CHECK(ts == std::vector<Time>{make_time(2015, 9, 7, 12), make_time(2015, 9, 11, 12),
                                make_time(2015, 9, 12, 12), make_time(2015, 9, 13, 12)});
}

TEST_CASE("Steps start at the first value and wrap with the range") {
  const Time day = make_time(2015, 9, 13);
  const Time hour_later = make_time(2015, 9, 13, 1);
  CHECK(cron_times("*/15 0 0 * * ?", day, hour_later) ==
        std::vector<Time>{day, day + Seconds{15}, day + Seconds{30}, day + Seconds{45}});
  CHECK(
      cron_times("5/15 0 0 * * ?", day, hour_later) ==
      std::vector<Time>{day + Seconds{5}, day + Seconds{20}, day + Seconds{35}, day + Seconds{50}});
  CHECK(cron_times("0 10-40/10 0 * * ?", day, hour_later) ==
        std::vector<Time>{make_time(2015, 9, 13, 0, 10), make_time(2015, 9, 13, 0, 20),
                          make_time(2015, 9, 13, 0, 30), make_time(2015, 9, 13, 0, 40)});
  CHECK(cron_times("0 0 22-2/2 * * ?", day, make_time(2015, 9, 14)) ==
        std::vector<Time>{make_time(2015, 9, 13, 0), make_time(2015, 9, 13, 2),
                          make_time(2015, 9, 13, 22)});
}

TEST_CASE("Year lists, ranges and steps limit the years") {
  auto ts = cron_times("0 0 0 1 1 ? 2016,2018-2019,2030/50", make_time(2010, 1, 1),
                       make_time(2199, 12, 31));
  CHECK(ts == std::vector<Time>{make_time(2016, 1, 1), make_time(2018, 1, 1), make_time(2019, 1, 1),
                                make_time(2030, 1, 1), make_time(2080, 1, 1), make_time(2130, 1, 1),
                                make_time(2180, 1, 1)});
}

TEST_CASE("Month and day names are case-insensitive") {
  auto ts = cron_times("0 0 0 ? jan,Mar mOn", kYear2015, kYear2016);
  // Mondays: January 5, 12, 19, 26; March 2, 9, 16, 23, 30.
  CHECK(days(ts) == std::vector<int>{5, 12, 19, 26, 2, 9, 16, 23, 30});
}

TEST_CASE("Extra whitespace between fields is tolerated and the text is kept") {
  auto c = cron("  0\t0  12 * *   ?  ");
  CHECK(c.text() == "  0\t0  12 * *   ?  ");
  CHECK(c.next_at_or_after(make_time(2015, 9, 13, 13)) == make_time(2015, 9, 14, 12));
}

TEST_CASE("times covers start inclusive up to end exclusive") {
  const auto hourly = cron("0 0 * * * ?");
  CHECK(hourly.times(make_time(2015, 9, 13, 13), make_time(2015, 9, 13, 15)) ==
        std::vector<Time>{make_time(2015, 9, 13, 13), make_time(2015, 9, 13, 14)});
  CHECK(hourly.times(make_time(2015, 9, 13, 13, 0, 0, 1), make_time(2015, 9, 13, 15)) ==
        std::vector<Time>{make_time(2015, 9, 13, 14)});
  CHECK(hourly.times(make_time(2015, 9, 13, 15), make_time(2015, 9, 13, 13)).empty());
  CHECK(hourly.times(make_time(2015, 9, 13, 13), make_time(2015, 9, 13, 13)).empty());
}

TEST_CASE("next_at_or_after rounds up to a whole second") {
  const auto secondly = cron("* * * * * ?");
  const Time t = make_time(2015, 9, 13, 13, 40);
  CHECK(secondly.next_at_or_after(t) == t);
  CHECK(secondly.next_at_or_after(t + std::chrono::milliseconds{1}) == t + Seconds{1});
  CHECK(secondly.next_at_or_after(t + std::chrono::milliseconds{999}) == t + Seconds{1});
}

TEST_CASE("next_at_or_after carries from seconds through to years") {
  const auto c = cron("30 15 10 1 JAN ?");
  CHECK(c.next_at_or_after(make_time(2015, 12, 31, 23, 59, 59)) ==
        make_time(2016, 1, 1, 10, 15, 30));
  CHECK(c.next_at_or_after(make_time(2016, 1, 1, 10, 15, 30)) == make_time(2016, 1, 1, 10, 15, 30));
  CHECK(c.next_at_or_after(make_time(2016, 1, 1, 10, 15, 31)) == make_time(2017, 1, 1, 10, 15, 30));
}

TEST_CASE("An expression that never fires again yields nothing, quickly") {
  CHECK_FALSE(cron("0 0 0 30 FEB ?").next_at_or_after(kYear2015).has_value());
  CHECK(cron("0 0 0 30 FEB ?").times(make_time(1970, 1, 1), make_time(2199, 1, 1)).empty());
  CHECK_FALSE(cron("0 0 0 1 1 ? 2010").next_at_or_after(kYear2015).has_value());
  CHECK_FALSE(cron("0 0 0 * * ?").next_at_or_after(make_time(2200, 1, 1)).has_value());
  CHECK_FALSE(cron("0 0 0 * * ?").next_at_or_after(Time::max()).has_value());
}

TEST_CASE("The last possible firing is the last second of 2199") {
  const auto c = cron("59 59 23 31 DEC ? 2199");
  const Time last = make_time(2199, 12, 31, 23, 59, 59);
  CHECK(c.next_at_or_after(kYear2015) == last);
  CHECK(c.next_at_or_after(last) == last);
  CHECK_FALSE(c.next_at_or_after(last + std::chrono::milliseconds{1}).has_value());
}

TEST_CASE("Times before 1970 start the search at 1970") {
  CHECK(cron("0 0 0 * * ?").next_at_or_after(make_time(1960, 5, 5)) == make_time(1970, 1, 1));
  CHECK(cron("0 0 0 * * ?").next_at_or_after(Time::min()) == make_time(1970, 1, 1));
}

TEST_CASE("Copies of an expression behave the same") {
  const auto a = cron("0 0 0 ? * 6#3");
  const CronExpression b = a;  // NOLINT(performance-unnecessary-copy-initialization): the test
  CHECK(b.text() == a.text());
  CHECK(b.times(kYear2015, kYear2016) == a.times(kYear2015, kYear2016));
}

TEST_CASE("An out-of-range value names the field and its range") {
  CHECK(error_of("0 0 25 * * ?") ==
        "cron expression \"0 0 25 * * ?\": hour field \"25\": value 25 out of range 0-23");
  CHECK_THAT(error_of("60 0 0 * * ?"), Catch::Contains("second field \"60\""));
  CHECK_THAT(error_of("0 60 0 * * ?"), Catch::Contains("minute field \"60\""));
  CHECK_THAT(error_of("0 0 0 32 * ?"), Catch::Contains("day-of-month field \"32\""));
  CHECK_THAT(error_of("0 0 0 0 * ?"), Catch::Contains("day-of-month field \"0\""));
  CHECK_THAT(error_of("0 0 0 1 13 ?"), Catch::Contains("month field \"13\""));
  CHECK_THAT(error_of("0 0 0 1 0 ?"), Catch::Contains("month field \"0\""));
  CHECK_THAT(error_of("0 0 0 ? * 8"), Catch::Contains("day-of-week field \"8\""));
  CHECK_THAT(error_of("0 0 0 ? * 0"), Catch::Contains("day-of-week field \"0\""));
  CHECK_THAT(error_of("0 0 0 1 1 ? 1969"), Catch::Contains("year field \"1969\""));
  CHECK_THAT(error_of("0 0 0 1 1 ? 2200"), Catch::Contains("year field \"2200\""));
  CHECK_THAT(error_of("0 0 0 1 1 ? 2020-2010"), Catch::Contains("year field \"2020-2010\""));
  CHECK_THAT(error_of("0 0 0 1-40 * ?"), Catch::Contains("value 40 out of range 1-31"));
}

TEST_CASE("Unknown names are rejected in the field they appear in") {
  CHECK_THAT(error_of("0 0 0 1 FOO ?"), Catch::Contains("month field \"FOO\""));
  CHECK_THAT(error_of("0 0 0 1 FOO ?"), Catch::Contains("JAN-DEC"));
  CHECK_THAT(error_of("0 0 0 ? * FUNDAY"), Catch::Contains("day-of-week field \"FUNDAY\""));
  CHECK_THAT(error_of("0 0 MON * * ?"), Catch::Contains("hour field \"MON\""));
  CHECK_THAT(error_of("0 0 0 1 MON ?"), Catch::Contains("month field \"MON\""));
}

TEST_CASE("Exactly one of day-of-month and day-of-week must be a question mark") {
  CHECK_THAT(error_of("0 0 0 ? * ?"),
             Catch::Contains("day-of-month") && Catch::Contains("day-of-week"));
  CHECK_THAT(error_of("0 0 0 * * *"),
             Catch::Contains("day-of-month") && Catch::Contains("day-of-week"));
  CHECK_THAT(error_of("0 0 0 1 * MON"), Catch::Contains("exactly one"));
  CHECK_THAT(error_of("? 0 0 1 * ?"), Catch::Contains("second field \"?\""));
  CHECK_THAT(error_of("0 0 0 ?,1 * ?"), Catch::Contains("day-of-month field \"?,1\""));
}

TEST_CASE("A wrong number of fields says how many were found") {
  CHECK_THAT(error_of("0 0 *"), Catch::Contains("found 3"));
  CHECK_THAT(error_of("0 0 0 * * ? 2015 1"), Catch::Contains("found 8"));
  CHECK_THAT(error_of(""), Catch::Contains("found 0"));
  CHECK_THAT(error_of("   "), Catch::Contains("found 0"));
}

TEST_CASE("Garbage is rejected naming the field") {
  CHECK_THAT(error_of("a b c d e f"), Catch::Contains("second field \"a\""));
  CHECK_THAT(error_of("0 0 0 1-x * ?"), Catch::Contains("day-of-month field \"1-x\""));
  CHECK_THAT(error_of("0 0,,1 0 * * ?"), Catch::Contains("minute field \"0,,1\""));
  CHECK_THAT(error_of("0 0 0 * * ? 20x5"), Catch::Contains("year field \"20x5\""));
  CHECK_THAT(error_of("0 0 -1 * * ?"), Catch::Contains("hour field \"-1\""));
  CHECK_THAT(error_of("0 0 99999999999 * * ?"), Catch::Contains("hour field"));
  CHECK_THAT(error_of("0 0 0 W * ?"), Catch::Contains("day-of-month field \"W\""));
  CHECK_THAT(error_of("0 0 0 ? * LW"), Catch::Contains("day-of-week field \"LW\""));
  CHECK_THAT(error_of("0 0 0 L-31 * ?"), Catch::Contains("day-of-month field \"L-31\""));
  CHECK_THAT(error_of("0 0 0 32W * ?"), Catch::Contains("day-of-month field \"32W\""));
  CHECK_THAT(error_of("0 0 0 ? * 8L"), Catch::Contains("day-of-week field \"8L\""));
}

TEST_CASE("# occurrences and weekdays out of range are rejected") {
  CHECK_THAT(error_of("0 0 0 ? * 6#6"), Catch::Contains("day-of-week field \"6#6\""));
  CHECK_THAT(error_of("0 0 0 ? * 6#0"), Catch::Contains("day-of-week field \"6#0\""));
  CHECK_THAT(error_of("0 0 0 ? * 8#1"), Catch::Contains("day-of-week field \"8#1\""));
  CHECK_THAT(error_of("0 0 0 ? * 6#"), Catch::Contains("day-of-week field \"6#\""));
}

TEST_CASE("A step of zero or beyond the field's size is rejected") {
  CHECK_THAT(error_of("0 */0 * * * ?"), Catch::Contains("minute field \"*/0\""));
  CHECK_THAT(error_of("0/0 0 * * * ?"), Catch::Contains("second field \"0/0\""));
  CHECK_THAT(error_of("0 0 0/25 * * ?"), Catch::Contains("hour field \"0/25\""));
  CHECK_THAT(error_of("0 0 0 * */x ?"), Catch::Contains("month field \"*/x\""));
}

TEST_CASE("max_firings_per_day multiplies the seconds, minutes and hours that fire") {
  CHECK(cron("0 0 * * * ?").max_firings_per_day() == 24);
  CHECK(cron("0 * * * * ?").max_firings_per_day() == 1440);
  CHECK(cron("* * * * * ?").max_firings_per_day() == 86400);
  CHECK(cron("0,30 0/15 9-17 ? * MON-FRI").max_firings_per_day() == 2 * 4 * 9);
  CHECK(cron("0 0 12 1 1 ? 2030").max_firings_per_day() == 1);
}

}  // namespace
}  // namespace celos
