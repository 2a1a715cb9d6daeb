// The deadline and onMiss fields through the real loader: values, defaults, and load errors
// that name the file, the line and the field.
#include <catch2/catch.hpp>

#include "celos/workflow_loader.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

using std::chrono::hours;
using testing::TempDir;
using testing::write_text_file;

WorkflowConfigPtr load_one(TempDir& dir, const std::string& fields,
                           const std::string& before = "") {
  write_text_file(dir / "workflows/wf.js",
                  before +
                      "celos.defineWorkflow({id: 'wf', schedule: celos.hourlySchedule(), "
                      "schedulingStrategy: celos.serialSchedulingStrategy(), trigger: "
                      "celos.alwaysTrigger(), externalService: "
                      "celos.commandExternalService('true')" +
                      fields + "});\n");
  WorkflowLoaderOptions options;
  options.workflows_dir = dir / "workflows";
  options.defaults_dir = dir / "defaults";
  options.db_dir = dir / "db";
  return make_js_workflow_source(options)->load();
}

std::string load_error(const std::string& fields, const std::string& before = "") {
  TempDir dir;
  auto config = load_one(dir, fields, before);
  CHECK_FALSE(config->find("wf"));
  REQUIRE(config->errors.size() == 1);
  const LoadError& e = config->errors.front();
  return e.file + ":" + std::to_string(e.line) + ": " + e.message;
}

}  // namespace

TEST_CASE("a workflow's deadline is read with its onMiss actions") {
  TempDir dir;
  auto none = load_one(dir, "");
  REQUIRE(none->find("wf"));
  CHECK_FALSE(none->find("wf")->deadline);
  TempDir d2;
  auto after = load_one(d2, ", deadline: {after: 'PT3H'}");
  REQUIRE(after->find("wf"));
  REQUIRE(after->find("wf")->deadline);
  CHECK(after->find("wf")->deadline->after == hours(3));
  CHECK_FALSE(after->find("wf")->deadline->kill_on_miss);
  TempDir d3;
  auto at = load_one(d3,
                     ", deadline: {at: '06:00', timeZone: 'UTC', dayOffset: 1}, "
                     "onMiss: ['notify', 'kill']");
  REQUIRE(at->find("wf"));
  const DeadlineRule& rule = *at->find("wf")->deadline;
  CHECK_FALSE(rule.after);
  CHECK(rule.at == hours(6));
  CHECK(rule.day_offset == 1);
  CHECK(rule.kill_on_miss);
}

TEST_CASE("a defaults file's CELOS_DEFAULT_DEADLINE applies unless the workflow says null") {
  const std::string defaults =
      "var CELOS_DEFAULT_DEADLINE = {after: 'PT2H'};\nvar CELOS_DEFAULT_ON_MISS = ['notify', "
      "'kill'];\n";
  TempDir dir;
  auto config = load_one(dir, "", defaults);
  REQUIRE(config->find("wf"));
  REQUIRE(config->find("wf")->deadline);
  CHECK(config->find("wf")->deadline->after == hours(2));
  CHECK(config->find("wf")->deadline->kill_on_miss);
  TempDir d2;
  auto off = load_one(d2, ", deadline: null", defaults);
  REQUIRE(off->find("wf"));
  CHECK_FALSE(off->find("wf")->deadline);
}

TEST_CASE("a malformed deadline is a load error naming the file, the line and the field") {
  CHECK_THAT(load_error(", deadline: {after: '-PT1H'}"),
             Catch::Contains("wf.js:1") && Catch::Contains("\"deadline\".after") &&
                 Catch::Contains("sign"));
  CHECK_THAT(
      load_error(", deadline: {at: '06:00', timeZone: 'Mars/Olympus'}"),
      Catch::Contains("wf.js:1") && Catch::Contains("timeZone") && Catch::Contains("Mars/Olympus"));
  CHECK_THAT(load_error(", deadline: {after: 'PT1H'}, onMiss: ['page']"),
             Catch::Contains("wf.js:1") && Catch::Contains("\"onMiss\"[0]") &&
                 Catch::Contains("\"page\""));
  CHECK_THAT(load_error(", deadline: {at: '25:00'}"), Catch::Contains("\"deadline\".at"));
  CHECK_THAT(load_error(", deadline: {after: 'PT1H', at: '06:00'}"),
             Catch::Contains("exactly one"));
  CHECK_THAT(load_error(", deadline: {after: 'PT1H', within: 3}"),
             Catch::Contains("unknown field \"within\""));
  CHECK_THAT(load_error(", deadline: 'PT1H'"), Catch::Contains("must be an object"));
  CHECK_THAT(load_error("", "var CELOS_DEFAULT_DEADLINE = {after: 'P1M'};\n"),
             Catch::Contains("wf.js:2") && Catch::Contains("CELOS_DEFAULT_DEADLINE.after"));
}

}  // namespace celos
