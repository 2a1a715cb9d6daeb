#include "celos/time_zone.h"

#include <chrono>
#include <string>

#include <catch2/catch.hpp>

namespace celos {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using Kind = LocalTimeMapping::Kind;

TimeZone zone(std::string_view name) {
  auto z = TimeZone::load(name);
  REQUIRE(z.has_value());
  return *z;
}

CivilTime civil(int y, int mo, int d, int h, int mi = 0) { return {y, mo, d, h, mi, 0, 0}; }

TEST_CASE("an unknown zone is an error naming it and the tzdata looked in") {
  for (std::string_view bad : {"Europe/Pari", "Mars/Olympus", "", "../etc/passwd", "/etc/localtime",
                               "localtime", "Fixed/UTC+02:00", "+02:00", "Europe//Paris"}) {
    INFO(bad);
    auto z = TimeZone::load(bad);
    REQUIRE_FALSE(z.has_value());
    CHECK(z.error().code == ErrorCode::kInvalid);
    CHECK_THAT(z.error().message,
               Catch::Contains("unknown time zone \"" + std::string(bad) + "\""));
    CHECK_THAT(z.error().message, Catch::Contains("tzdata " + tzdata_version()));
  }
}

TEST_CASE("UTC and its aliases never leave offset zero, real zones are not UTC") {
  CHECK(TimeZone::utc().is_utc());
  CHECK(zone("UTC").is_utc());
  CHECK(zone("Etc/UTC").is_utc());
  CHECK(zone("Etc/GMT").is_utc());
  CHECK_FALSE(zone("Europe/London").is_utc());
  CHECK_FALSE(zone("Etc/GMT+5").is_utc());
  CHECK(TimeZone::utc().at(make_time(2026, 7, 1, 6)).offset == seconds{0});
}

TEST_CASE("an instant reads as Paris summer and winter time with its offset") {
  const auto paris = zone("Europe/Paris");
  const auto summer = paris.at(make_time(2026, 7, 1, 4, 0, 0, 250));
  CHECK(summer.local.hour == 6);
  CHECK(summer.local.millisecond == 250);
  CHECK(summer.offset == hours{2});
  CHECK(summer.is_dst);
  CHECK(summer.abbreviation == "CEST");
  CHECK(format_local_time(summer) == "2026-07-01T06:00:00+02:00");
  const auto winter = paris.at(make_time(2026, 12, 1, 5));
  CHECK(format_local_time(winter) == "2026-12-01T06:00:00+01:00");
  CHECK_FALSE(winter.is_dst);
}

TEST_CASE("a local time in the spring gap moves later by the gap, as java.time does") {
  // 2026-03-29 02:00 CET -> 03:00 CEST in Paris: 02:30 does not exist.
  const auto m = zone("Europe/Paris").from_local(civil(2026, 3, 29, 2, 30));
  CHECK(m.kind == Kind::kGap);
  CHECK(m.first == make_time(2026, 3, 29, 1, 30));  // 03:30 CEST
  CHECK(m.second == m.first);
  CHECK(m.transition == make_time(2026, 3, 29, 1, 0));
}

TEST_CASE("a local time in the autumn overlap maps to two instants, summer time first") {
  // 2026-10-25 03:00 CEST -> 02:00 CET: 02:30 happens at 00:30Z and at 01:30Z.
  const auto m = zone("Europe/Paris").from_local(civil(2026, 10, 25, 2, 30));
  CHECK(m.kind == Kind::kOverlap);
  CHECK(m.first == make_time(2026, 10, 25, 0, 30));
  CHECK(m.second == make_time(2026, 10, 25, 1, 30));
  CHECK(m.transition == make_time(2026, 10, 25, 1, 0));
}

TEST_CASE("an ordinary local time maps to one instant, keeping its milliseconds") {
  auto c = civil(2026, 7, 1, 6);
  c.millisecond = 5;
  const auto m = zone("America/New_York").from_local(c);
  CHECK(m.kind == Kind::kUnique);
  CHECK(m.first == make_time(2026, 7, 1, 10, 0, 0, 5));
  CHECK(m.second == m.first);
}

TEST_CASE("Lord Howe's half-hour daylight saving: a 30-minute gap and overlap") {
  const auto lord_howe = zone("Australia/Lord_Howe");
  // 2026-10-04 02:00 +10:30 -> 02:30 +11:00.
  const auto gap = lord_howe.from_local(civil(2026, 10, 4, 2, 15));
  CHECK(gap.kind == Kind::kGap);
  CHECK(format_local_time(lord_howe.at(gap.first)) == "2026-10-04T02:45:00+11:00");
  // 2026-04-05 02:00 +11:00 -> 01:30 +10:30.
  const auto overlap = lord_howe.from_local(civil(2026, 4, 5, 1, 45));
  CHECK(overlap.kind == Kind::kOverlap);
  CHECK(overlap.second - overlap.first == minutes{30});
}

TEST_CASE("rules continue past 2037, the last transition Debian's files list") {
  const auto m = zone("America/New_York").from_local(civil(2040, 3, 11, 2, 30));
  CHECK(m.kind == Kind::kGap);
  CHECK(zone("Europe/Paris").at(make_time(2100, 7, 1)).offset == hours{2});
}

TEST_CASE("a zone that abolished daylight saving has no transitions after it did") {
  // Turkey stayed on +03:00 from 2016-09-07; Brazil stopped DST in 2019.
  CHECK_FALSE(zone("Europe/Istanbul").next_transition(make_time(2017, 1, 1)).has_value());
  CHECK_FALSE(zone("America/Sao_Paulo").next_transition(make_time(2019, 3, 1)).has_value());
  CHECK(zone("America/Sao_Paulo").from_local(civil(2026, 11, 1, 0, 30)).kind == Kind::kUnique);
}

TEST_CASE("next_transition gives the next change of offset with both offsets") {
  const auto t = zone("Europe/Paris").next_transition(make_time(2026, 1, 1));
  REQUIRE(t.has_value());
  CHECK(t->at == make_time(2026, 3, 29, 1));
  CHECK(t->before == hours{1});
  CHECK(t->after == hours{2});
  CHECK_FALSE(TimeZone::utc().next_transition(make_time(2026, 1, 1)).has_value());
}

TEST_CASE("the tzdata version and zone list come from the system's tzdata") {
  CHECK(tzdata_version() != "unknown");
  CHECK(tzdata_version().size() >= 5);  // "2025b"
  const auto names = tzdata_zone_names();
  CHECK(names.size() > 300);
  CHECK(std::binary_search(names.begin(), names.end(), "Europe/Paris"));
  CHECK(std::binary_search(names.begin(), names.end(), "Australia/Lord_Howe"));
  for (const auto& name : {names.front(), names.back()}) CHECK(TimeZone::load(name).has_value());
}

TEST_CASE("refresh_tzdata reports nothing while the version on disk stays the same") {
  (void)refresh_tzdata();
  CHECK_FALSE(refresh_tzdata().has_value());
}

TEST_CASE("offsets print as ISO 8601, with seconds only when a historical offset has them") {
  CHECK(format_offset(seconds{0}) == "+00:00");
  CHECK(format_offset(hours{5} + minutes{30}) == "+05:30");
  CHECK(format_offset(-(hours{3} + minutes{30})) == "-03:30");
  CHECK(format_offset(-(minutes{44} + seconds{30})) == "-00:44:30");
}

}  // namespace
}  // namespace celos
