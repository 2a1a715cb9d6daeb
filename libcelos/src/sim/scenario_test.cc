// Scenario files: what they say, and errors that name the file and the line or field.
#include "sim/scenario.h"

#include <catch2/catch.hpp>

namespace {

using namespace celos;
using namespace celos::sim;

Result<Scenario> parse(const std::string& text) { return parse_scenario(text, "s.json", "/base"); }

std::string error_of(const std::string& text) {
  auto s = parse(text);
  REQUIRE_FALSE(s);
  CHECK(s.error().code == ErrorCode::kInvalid);
  return s.error().message;
}

constexpr const char* kHead =
    R"("workflows": "wf", "start": "2015-09-13T00:00Z", "end": "2015-09-14T00:00Z")";

TEST_CASE("A scenario reads every section") {
  auto s = parse(std::string("{") + kHead + R"(, "defaults": "/abs/defaults", "step": "5m",
    // comments and trailing commas are allowed
    "substitute": {"@HOME@": "/home"},
    "data": [{"path": "/in/${hour}/_READY", "every": "1h", "delay": "10m",
              "late": {"2015-09-13T03:00Z": "3h"}, "never": ["2015-09-13T04:00Z"]},
             {"dataset": "raw", "announce": true, "at": "2015-09-13T01:00Z"}],
    "jobs": [{"workflow": "wc-*", "duration": "1h30m", "failOnAttempt": [1, 3],
              "failAt": "2015-09-13T02:00Z", "failureRate": 0.25, "seed": 7}],
    "operators": [{"at": "2015-09-13T05:00Z", "rerun": "wc", "slot": "2015-09-13T01:00Z"},
                  {"at": "2015-09-13T06:00Z", "maintenance": "drain", "reason": "upgrade"}],
    "outages": [{"service": "oozie", "from": "2015-09-13T01:00Z", "to": "2015-09-13T02:00Z"},
                {"fileSystem": "hdfs://*", "from": "2015-09-13T01:00Z", "to": "2015-09-13T03:00Z"}],
    "expect": [{"workflow": "wc", "slot": "2015-09-13T01:00Z", "state": "SUCCESS", "at": "2015-09-13T02:00Z"},
               {"count": "wc-*", "state": "FAILURE", "atMost": 2},
               {"noFailure": "*"}],
  })");
  REQUIRE(s);
  CHECK(s->workflows_dir == "/base/wf");
  CHECK(s->defaults_dir == "/abs/defaults");
  CHECK(s->step == Seconds(300));
  CHECK(s->substitute.at("@HOME@") == "/home");
  REQUIRE(s->data.size() == 2);
  CHECK(s->data[0].times.size() == 24);
  CHECK(s->data[0].delay == Seconds(600));
  CHECK(s->data[0].late.at(make_time(2015, 9, 13, 3)) == Seconds(3 * 3600));
  CHECK(s->data[0].never.count(make_time(2015, 9, 13, 4)) == 1);
  CHECK(s->data[1].announce);
  CHECK(s->jobs[0].duration == Seconds(5400));
  CHECK(s->jobs[0].fail_on_attempt == std::set<int>{1, 3});
  CHECK(s->jobs[0].fail_at.size() == 1);
  CHECK(s->operators[1].action == OperatorAction::kMaintenance);
  CHECK(s->operators[1].mode == MaintenanceMode::kDrain);
  CHECK(s->outages[1].file_system == "hdfs://*");
  REQUIRE(s->expect.size() == 3);
  CHECK(s->expect[0].kind == ExpectKind::kState);
  CHECK(s->expect[1].kind == ExpectKind::kCount);
  CHECK(s->expect[1].compare == Compare::kAtMost);
  CHECK(s->expect[2].kind == ExpectKind::kNoFailure);
}

TEST_CASE("Bad JSON names the file, the line and the column") {
  const std::string message = error_of("{\n  \"workflows\": \"wf\",\n  \"start\" \"x\"\n}");
  CHECK(message.rfind("s.json: line 3, column", 0) == 0);
  CHECK(message.find("not valid JSON") != std::string::npos);
}

TEST_CASE("A wrong field is named with its place, and says what is wrong") {
  CHECK(error_of(std::string("{") + kHead + R"(, "jobs": [{}, {"duration": "ten minutes"}]})") ==
        "s.json: field jobs[1].duration: \"ten minutes\" is not a duration (seconds, or such as "
        "90s, 10m, 2h, 1d, 1h30m)");
  CHECK(error_of(std::string("{") + kHead + R"(, "jobs": [{"duraton": "10m"}]})") ==
        "s.json: field jobs[0].duraton: unknown key (docs/simulate.md lists the keys)");
  CHECK(error_of(R"({"workflows": "wf", "end": "2015-09-14T00:00Z"})")
            .find("field start: is required") != std::string::npos);
  CHECK(
      error_of(std::string("{") + kHead +
               R"(, "expect": [{"workflow": "w", "slot": "2015-09-13T01:00Z", "state": "DONE"}]})")
          .find("field expect[0].state: unknown state \"DONE\"") != std::string::npos);
  CHECK(error_of(std::string("{") + kHead + R"(, "data": [{"path": "/x"}]})")
            .find("field data[0].times: no instances") != std::string::npos);
  CHECK(error_of(std::string("{") + kHead +
                 R"(, "operators": [{"at": "2015-09-13T01:00Z", "rerun": "w"}]})")
            .find("field operators[0].slot: is required") != std::string::npos);
  CHECK(error_of(R"({"workflows": "wf", "start": "2015-09-14T00:00Z", "end": "2015-09-13T00:00Z"})")
            .find("field end: must be after") != std::string::npos);
  CHECK(error_of("[1]").find("field (top level): must be an object") != std::string::npos);
}

TEST_CASE("A missing scenario file is named") {
  auto s = load_scenario("/nonexistent/scenario.json");
  REQUIRE_FALSE(s);
  CHECK(s.error().message == "/nonexistent/scenario.json: cannot read the scenario file");
}

TEST_CASE("Durations are seconds or units") {
  CHECK(parse_duration("90") == Seconds(90));
  CHECK(parse_duration("1h30m") == Seconds(5400));
  CHECK(parse_duration("2d") == Seconds(172800));
  CHECK_FALSE(parse_duration("1h30"));
  CHECK_FALSE(parse_duration("m"));
  CHECK_FALSE(parse_duration(""));
  CHECK(glob_match("wc-*", "wc-nyc"));
  CHECK_FALSE(glob_match("wc-*", "total"));
}

}  // namespace
