// celos.serviceLimits through the real loader (issue 29): a defaults file imported by many
// workflow files declares its limits once; bad input is a load error naming the workflow file,
// the defaults file and its line; two files that disagree about an endpoint are an error of the
// later one.
#include <catch2/catch.hpp>

#include "js/js_api_test_util.h"
#include "js/js_loader_test_util.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

using testing::TempDir;
using testing::write_text_file;

// A workflow `id` that imports `defaults` first.
std::string workflow(const std::string& id, const std::string& defaults = "limits") {
  std::string definition = js_test::define("");
  definition.replace(definition.find("'wf'"), 4, "'" + id + "'");
  return "celos.importDefaults('" + defaults + "');\n" + definition;
}

WorkflowConfigPtr load(TempDir& dir) { return js_test::load_directory(dir.path()); }

}  // namespace

TEST_CASE("serviceLimits in a defaults file imported by two workflow files declares once") {
  TempDir dir;
  write_text_file(dir / "defaults/limits.js",
                  "celos.serviceLimits('oozie http://oozie:11000/oozie', {submitsPerSecond: 5, "
                  "maxConcurrent: 20});\n"
                  "celos.serviceLimits('slurm batch', {maxConcurrent: 3});\n"
                  "celos.serviceLimits('command build-01', {submitsPerSecond: 0.5});\n");
  write_text_file(dir / "workflows/a.js", workflow("a"));
  write_text_file(dir / "workflows/b.js", workflow("b"));
  auto config = load(dir);
  CHECK(config->errors.empty());
  REQUIRE(config->service_limits.size() == 3);
  const ServiceLimits& oozie = config->service_limits.at("oozie http://oozie:11000/oozie");
  CHECK(oozie.submits_per_second == 5.0);
  CHECK(oozie.max_concurrent == 20);
  CHECK_FALSE(config->service_limits.at("slurm batch").submits_per_second);
  CHECK(config->service_limits.at("slurm batch").max_concurrent == 3);
  CHECK(config->service_limits.at("command build-01").submits_per_second == 0.5);
  CHECK(config->find("a"));
  CHECK(config->find("b"));
}

TEST_CASE("bad serviceLimits arguments are load errors naming the file, line and field") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"42, {maxConcurrent: 1}", "argument endpoint must be a string, got a number"},
      {"'', {maxConcurrent: 1}", "argument endpoint must not be empty"},
      {"'slurm batch'", "argument limits must be an object"},
      {"'slurm batch', {}", "give submitsPerSecond, maxConcurrent or both"},
      {"'slurm batch', {maxConcurent: 1}", "unknown field \"maxConcurent\""},
      {"'slurm batch', {maxConcurrent: -1}",
       "field \"maxConcurrent\" must be an integer >= 1, got -1"},
      {"'slurm batch', {maxConcurrent: 2.5}", "field \"maxConcurrent\" must be an integer >= 1"},
      {"'slurm batch', {maxConcurrent: '3'}",
       "field \"maxConcurrent\" must be a number, got a string"},
      {"'slurm batch', {submitsPerSecond: -2}", "field \"submitsPerSecond\" must be a number > 0"},
      {"'slurm batch', {submitsPerSecond: 0}", "field \"submitsPerSecond\" must be a number > 0"},
      {"'slurm batch', {submitsPerSecond: 'fast'}",
       "field \"submitsPerSecond\" must be a number > 0 (at most 1000000), got a string"},
  };
  for (const auto& [args, expected] : cases) {
    INFO(args);
    TempDir dir;
    write_text_file(dir / "defaults/limits.js", "// limits\ncelos.serviceLimits(" + args + ");\n");
    write_text_file(dir / "workflows/wf.js", workflow("wf"));
    auto config = load(dir);
    CHECK_FALSE(config->find("wf"));
    REQUIRE(config->errors.size() == 1);
    const LoadError& e = config->errors.front();
    CHECK(e.file == "wf.js");
    CHECK(e.line == 1);
    CHECK_THAT(e.message, Catch::Contains("celos.serviceLimits: " + expected));
    CHECK_THAT(e.message, Catch::Contains("(at defaults/limits.js:2)"));
    CHECK(config->service_limits.empty());
  }
}

TEST_CASE("two declarations of one endpoint with other limits are an error of the later one") {
  TempDir dir;
  write_text_file(dir / "defaults/limits.js",
                  "celos.serviceLimits('slurm batch', {maxConcurrent: 3});\n");
  write_text_file(dir / "defaults/other.js",
                  "celos.serviceLimits('slurm batch', {maxConcurrent: 4});\n");
  write_text_file(dir / "workflows/a.js", workflow("a"));
  write_text_file(dir / "workflows/b.js", workflow("b", "other"));
  auto config = load(dir);
  REQUIRE(config->errors.size() == 1);
  CHECK(config->errors[0].file == "b.js");
  CHECK_THAT(config->errors[0].message,
             Catch::Contains("endpoint \"slurm batch\" already has other limits (a.js line 1)"));
  CHECK(config->service_limits.at("slurm batch").max_concurrent == 3);
  CHECK(config->find("a"));
  CHECK(config->find("b"));  // the workflows themselves are fine

  TempDir same;  // within one file: an error at the second call
  write_text_file(same / "workflows/wf.js",
                  "celos.serviceLimits('slurm batch', {maxConcurrent: 3});\n"
                  "celos.serviceLimits('slurm batch', {maxConcurrent: 3});\n"
                  "celos.serviceLimits('slurm batch', {submitsPerSecond: 3});\n");
  auto one = load(same);
  REQUIRE(one->errors.size() == 1);
  CHECK(one->errors[0].line == 3);
  CHECK_THAT(one->errors[0].message, Catch::Contains("already has other limits (line 1)"));
}

}  // namespace celos
