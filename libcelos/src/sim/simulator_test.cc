// Stories of `celos simulate`: a scenario over real workflow files, stepped by the real
// Scheduler on the simulated world.
#include <sstream>

#include <catch2/catch.hpp>

#include "celos/simulate.h"
#include "testing/temp_dir.h"

namespace {

using namespace celos;
using celos::testing::read_text_file;
using celos::testing::TempDir;
using celos::testing::write_text_file;

constexpr const char* kWorkflows = R"JS(
celos.defineWorkflow({
  "id": "wc",
  "schedule": celos.hourlySchedule(),
  "schedulingStrategy": celos.serialSchedulingStrategy(),
  "trigger": celos.hdfsCheckTrigger("/in/${year}-${month}-${day}/${hour}00/_READY", "file:///"),
  "externalService": celos.commandExternalService("touch /should/never/run"),
  "startTime": "@START@",
  "maxRetryCount": 1,
});
celos.defineWorkflow({
  "id": "total",
  "schedule": celos.hourlySchedule(),
  "schedulingStrategy": celos.serialSchedulingStrategy(),
  "trigger": celos.successTrigger("wc"),
  "externalService": celos.commandExternalService("true"),
  "startTime": "@START@",
});
)JS";

// The world: input hourly 10 minutes late, 03:00 three hours late, 05:00 never; wc's 06:00 fails
// every attempt. `more` is added to the scenario's object.
std::string scenario(const std::string& more) {
  return R"({
    "workflows": "workflows",
    "substitute": {"@START@": "2015-09-13T00:00Z"},
    "start": "2015-09-13T00:00Z", "end": "2015-09-13T12:00Z", "step": "5m",
    "data": [{"path": "/in/${year}-${month}-${day}/${hour}00/_READY", "every": "1h",
              "delay": "10m", "late": {"2015-09-13T03:00Z": "3h"},
              "never": "2015-09-13T05:00Z"}],
    "jobs": [{"workflow": "wc", "duration": "10m", "failAt": "2015-09-13T06:00Z"},
             {"workflow": "*", "duration": "1m"}])" +
         more + "}";
}

struct Run {
  TempDir dir;
  std::ostringstream out, err;
  Result<bool> result = false;

  explicit Run(const std::string& more, SimulateOptions options = {}) {
    write_text_file(dir / "workflows/wc.js", kWorkflows);
    write_text_file(dir / "scenario.json", scenario(more));
    options.scenario = dir / "scenario.json";
    result = simulate(options, out, err);
  }
  // Every expectation held (else the summary and the failures are shown).
  void passed() {
    REQUIRE(result);
    INFO(out.str() << err.str());
    CHECK(*result);
  }
};

TEST_CASE(
    "A scenario steps the real scheduler over simulated hours: late data, missing data, "
    "a failing slot") {
  Run run(R"(, "expect": [
      {"workflow": "wc", "slot": "2015-09-13T01:00Z", "state": "SUCCESS", "at": "2015-09-13T02:00Z"},
      {"workflow": "wc", "slot": "2015-09-13T03:00Z", "state": "WAITING", "at": "2015-09-13T05:00Z"},
      {"workflow": "wc", "slot": "2015-09-13T03:00Z", "state": "SUCCESS"},
      {"workflow": "wc", "slot": "2015-09-13T05:00Z", "state": "WAITING"},
      {"workflow": "wc", "slot": "2015-09-13T06:00Z", "state": "FAILURE"},
      {"workflow": "total", "slot": "2015-09-13T06:00Z", "state": "WAITING"},
      {"count": "wc", "state": "SUCCESS", "equals": 10},
      {"noFailure": "total"}])");
  run.passed();
  const std::string out = run.out.str();
  CHECK(out.find("simulated 2015-09-13T00:00:00.000Z .. 2015-09-13T11:55:00.000Z (step 300 s): "
                 "144 steps, 2 workflows") == 0);
  CHECK(out.find("PASS expect[6]: 10 SUCCESS slots of wc") != std::string::npos);
  // The still-waiting slot says why, with its trigger tree.
  CHECK(out.find("  wc@2015-09-13T05:00:00.000Z\n      - not ready HDFSCheckTrigger:") !=
        std::string::npos);
  CHECK(run.err.str().empty());
}

TEST_CASE("The timeline of a scenario is the same, byte for byte, in every run") {
  TempDir dir;
  SimulateOptions a, b;
  a.timeline = dir / "a.jsonl";
  b.timeline = dir / "b.jsonl";
  Run first("", a), second("", b);
  REQUIRE(first.result);
  REQUIRE(second.result);
  const std::string timeline = read_text_file(a.timeline);
  INFO(timeline);
  CHECK(timeline == read_text_file(b.timeline));
  CHECK(timeline.find(R"({"at":"2015-09-13T01:10:00.000Z","workflow":"wc",)"
                      R"("slot":"2015-09-13T01:00:00.000Z","from":null,"to":"READY",)"
                      R"("retryCount":0,"by":"step"})") != std::string::npos);
  CHECK(timeline.find(R"("to":"RUNNING","retryCount":0,"externalID":"sim-1","by":"step"})") !=
        std::string::npos);
}

TEST_CASE("A failed expectation prints the expected and actual state and the slot's history") {
  Run run(R"(, "expect": [{"workflow": "wc", "slot": "2015-09-13T06:00Z", "state": "SUCCESS"},
                          {"noFailure": "*"}])");
  REQUIRE(run.result);
  CHECK_FALSE(*run.result);
  const std::string err = run.err.str();
  INFO(err);
  CHECK(err.find(
            "expectation expect[0] failed: slot wc@2015-09-13T06:00:00.000Z: expected "
            "SUCCESS, actual FAILURE\n  history of wc@2015-09-13T06:00:00.000Z (6 changes):") == 0);
  CHECK(err.find(R"("to":"FAILURE","retryCount":1,"externalID":"sim-)") != std::string::npos);
  CHECK(err.find("simulated failure of attempt 2 (jobs[0])") != std::string::npos);
  CHECK(err.find("expectation expect[1] failed: no FAILURE in *: expected none, actual 1") !=
        std::string::npos);
}

TEST_CASE("Until stops early (later expectations are not checked), only steps one workflow") {
  SimulateOptions options;
  options.until = make_time(2015, 9, 13, 2);
  options.only = "total";
  Run run(
      R"(, "expect": [{"count": "*", "state": "SUCCESS", "equals": 0, "at": "2015-09-13T02:00Z"},
                          {"workflow": "wc", "slot": "2015-09-13T01:00Z", "state": "SUCCESS"}])",
      options);
  run.passed();
  CHECK(run.out.str().find("25 steps, 1 workflows") != std::string::npos);
  CHECK(run.out.str().find("SKIP expect[1]: not checked") != std::string::npos);
}

TEST_CASE("Operators rerun, kill, pause and drain at given times, an outage holds a workflow") {
  Run run(R"(,
    "operators": [
      {"at": "2015-09-13T07:00Z", "rerun": "wc", "slot": "2015-09-13T01:00Z"},
      {"at": "2015-09-13T00:00Z", "kill": "wc", "slot": "2015-09-13T00:00Z"},
      {"at": "2015-09-13T08:00Z", "pause": "total"},
      {"at": "2015-09-13T09:00Z", "maintenance": "drain"},
      {"at": "2015-09-13T10:00Z", "rerun": "nope", "slot": "2015-09-13T01:00Z"}],
    "outages": [{"fileSystem": "file:*", "from": "2015-09-13T02:00Z", "to": "2015-09-13T03:00Z"}],
    "expect": [
      {"workflow": "wc", "slot": "2015-09-13T00:00Z", "state": "KILLED"},
      {"workflow": "wc", "slot": "2015-09-13T01:00Z", "state": "SUCCESS", "at": "2015-09-13T08:00Z"},
      {"workflow": "wc", "slot": "2015-09-13T02:00Z", "state": "WAITING", "at": "2015-09-13T02:55Z"},
      {"workflow": "wc", "slot": "2015-09-13T02:00Z", "state": "SUCCESS", "at": "2015-09-13T04:00Z"},
      {"workflow": "total", "slot": "2015-09-13T08:00Z", "state": "WAITING"},
      {"workflow": "wc", "slot": "2015-09-13T09:00Z", "state": "READY"}])");
  run.passed();
  CHECK(run.out.str().find("note: operators[4]: unknown workflow \"nope\"") != std::string::npos);
  CHECK(run.out.str().find("step errors:") != std::string::npos);
}

// Runs a one-hour scenario over dir/workflows with `more` added to it.
Result<bool> simulate_hour(const TempDir& dir, const std::string& more, std::ostringstream& err) {
  write_text_file(dir / "scenario.json",
                  R"({"workflows": "workflows", "start": "2015-09-13T00:00Z",
                      "end": "2015-09-13T01:00Z")" +
                      more + "}");
  std::ostringstream out;
  return simulate({.scenario = dir / "scenario.json"}, out, err);
}

TEST_CASE("A workflow file that fails to load is reported with its file and line") {
  TempDir dir;
  write_text_file(dir / "workflows/bad.js", "celos.defineWorkflow({\"id\": 1});\n");
  std::ostringstream err;
  REQUIRE(simulate_hour(dir, "", err));
  CHECK(err.str().find("workflow file ") == 0);
  CHECK(err.str().find("bad.js:1: ") != std::string::npos);
}

TEST_CASE("A scenario naming an unknown dataset or a missing directory is an error") {
  TempDir dir;
  std::ostringstream err;
  auto missing = simulate_hour(dir, "", err);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kInvalid);
  CHECK(missing.error().message.find("workflows is not a directory") != std::string::npos);
  write_text_file(dir / "workflows/wc.js", kWorkflows);
  auto unknown =
      simulate_hour(dir, R"(, "data": [{"dataset": "nope", "at": "2015-09-13T00:00Z"}])", err);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.find("scenario.json: field data[0].dataset: no dataset \"nope\"") !=
        std::string::npos);
}

}  // namespace
