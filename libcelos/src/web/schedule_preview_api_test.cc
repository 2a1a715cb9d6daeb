// GET /api/v1/schedule-preview (issue 26): local times, the DST rule of each slot, the lint, the
// cap of 10,000 slots, and the tzdata version in /version.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "celos/api.h"
#include "celos/schedule.h"
#include "testing/api_world.h"

namespace {

namespace json = boost::json;
using namespace celos;

std::shared_ptr<const Schedule> paris(std::string_view expr, DstRule rule = {}) {
  return make_cron_schedule(*CronExpression::parse(expr), *TimeZone::load("Europe/Paris"), rule);
}

struct SchedulePreviewApiWorld : celos::testing::ApiWorld {
  SchedulePreviewApiWorld() {
    add("daily").schedule = paris("0 0 6 * * ?");
    add("gap").schedule = paris("0 30 2 * * ?");
    add("both").schedule = paris("0 30 2 * * ?", {DstGap::kSkip, DstOverlap::kBoth, true});
    add("utc").schedule = make_minutely_schedule();
    serve();
  }
};

TEST_CASE("schedule-preview gives each slot's UTC time, local time and rule, oldest first") {
  SchedulePreviewApiWorld w;
  const auto answer = w.call_json(
      "GET", "/api/v1/schedule-preview?id=daily&start=2026-03-27T00:00Z&end=2026-03-31T00:00Z");
  CHECK(answer.at("timeZone").as_string() == "Europe/Paris");
  CHECK(answer.at("tzdata").as_string() == tzdata_version());
  const auto& slots = answer.at("slots").as_array();
  REQUIRE(slots.size() == 4);
  CHECK(slots[0].at("time").as_string() == "2026-03-27T05:00:00.000Z");
  CHECK(slots[0].at("local").as_string() == "2026-03-27T06:00:00+01:00");
  CHECK(slots[0].at("rule").is_null());
  CHECK(slots[3].at("time").as_string() == "2026-03-30T04:00:00.000Z");
  CHECK(slots[3].at("local").as_string() == "2026-03-30T06:00:00+02:00");
  CHECK(answer.at("warnings").as_array().empty());
}

TEST_CASE("schedule-preview names the DST rule that moved a slot and warns without dst") {
  SchedulePreviewApiWorld w;
  const auto gap = w.call_json(
      "GET", "/api/v1/schedule-preview?id=gap&start=2026-03-29T00:00Z&end=2026-03-30T00:00Z");
  const auto& slot = gap.at("slots").as_array().at(0);
  CHECK(slot.at("time").as_string() == "2026-03-29T01:30:00.000Z");
  CHECK(slot.at("local").as_string() == "2026-03-29T03:30:00+02:00");
  CHECK(slot.at("rule").as_string() == "shift");
  REQUIRE(gap.at("warnings").as_array().size() == 1);
  CHECK_THAT(std::string(gap.at("warnings").at(0).as_string()),
             Catch::Contains("2026-03-29T02:30 does not exist"));

  const auto both = w.call_json(
      "GET", "/api/v1/schedule-preview?id=both&start=2026-10-25T00:00Z&end=2026-10-26T00:00Z");
  const auto& two = both.at("slots").as_array();
  REQUIRE(two.size() == 2);
  CHECK(two[0].at("local").as_string() == "2026-10-25T02:30:00+02:00");
  CHECK(two[1].at("local").as_string() == "2026-10-25T02:30:00+01:00");
  CHECK(two[1].at("rule").as_string() == "both");
  CHECK(both.at("warnings").as_array().empty());
}

TEST_CASE("schedule-preview refuses more than 10,000 slots and unknown workflows") {
  SchedulePreviewApiWorld w;
  const auto big = w.call_json(
      "GET", "/api/v1/schedule-preview?id=utc&start=2026-01-01T00:00Z&end=2026-02-01T00:00Z", 400);
  CHECK_THAT(std::string(big.at("error").as_string()), Catch::Contains("more than 10000 slots"));
  // Exactly 10,000 is fine (a minutely schedule over 10,000 minutes).
  const auto fine = w.call_json(
      "GET", "/api/v1/schedule-preview?id=utc&start=2026-01-01T00:00Z&end=2026-01-07T22:40Z");
  CHECK(fine.at("slots").as_array().size() == 10000);
  CHECK(fine.at("timeZone").as_string() == "UTC");
  CHECK(fine.at("slots").at(0).at("local").as_string() == "2026-01-01T00:00:00+00:00");
  w.call_json("GET", "/api/v1/schedule-preview?id=nope", 404);
}

TEST_CASE("/version reports the tzdata version in use") {
  SchedulePreviewApiWorld w;
  const auto v = w.call_json("GET", "/api/v1/version");
  CHECK(v.at("tzdata").as_string() == tzdata_version());
}

}  // namespace
