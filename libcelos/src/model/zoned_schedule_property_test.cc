// The property of schedules in local time (issue 26, testing/zone_property.h), sampled to run in
// CI in well under 60 s: the zones whose rules are the hardest, over 1970-2037 with the whole
// corpus, and every zone the system's tzdata lists over two years with part of it. The full run
// (every zone x 1970-2037 x the corpus) is bench/zones/ (bench/README.md has its time).
#include <catch2/catch.hpp>

#include "celos/time_zone.h"
#include "testing/zone_property.h"

namespace celos {
namespace {

// Hidden under the sanitizers: single-threaded arithmetic over values, which the zone and
// schedule unit tests already run there, slowed by them from 9 s (dev) to 105-133 s (asan) and to
// ctest's 300 s timeout (tsan) on a busy 2-core machine. The dev preset runs both.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CELOS_ZONE_PROPERTY_TAGS "[.][zone_property]"
#else
#define CELOS_ZONE_PROPERTY_TAGS "[zone_property]"
#endif

TEST_CASE("the property corpus holds at least 200 cron expressions") {
  CHECK(testing::zone_property_corpus().size() >= 200);
}

TEST_CASE("zoned schedules match the reference in hard zones over 1970-2037, whole corpus",
          CELOS_ZONE_PROPERTY_TAGS) {
  testing::ZonePropertyOptions options;
  options.zones = {"Europe/Paris", "America/New_York",  "Australia/Lord_Howe",
                   "Pacific/Apia", "America/Sao_Paulo", "Asia/Kolkata"};
  options.expressions = testing::zone_property_corpus();
  const auto report = testing::check_zoned_schedules(options);
  for (const auto& failure : report.failures) UNSCOPED_INFO(failure);
  CHECK(report.failures.empty());
  CHECK(report.windows > 10000);
}

TEST_CASE("zoned schedules match the reference in every system zone, two years, part of the corpus",
          CELOS_ZONE_PROPERTY_TAGS) {
  testing::ZonePropertyOptions options;
  options.zones = tzdata_zone_names();
  REQUIRE(options.zones.size() > 300);
  const auto corpus = testing::zone_property_corpus();
  for (std::size_t i = 0; i < corpus.size(); i += 10) options.expressions.push_back(corpus[i]);
  options.first_year = 2025;
  options.last_year = 2026;
  const auto report = testing::check_zoned_schedules(options);
  for (const auto& failure : report.failures) UNSCOPED_INFO(failure);
  CHECK(report.failures.empty());
}

}  // namespace
}  // namespace celos
