// The command line against a scripted server: exit codes, usage, -o json, tables, colours.
#include <fstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "cli/cli_test_util.h"
#include "testing/temp_dir.h"

namespace {

using namespace celos;
using celos::cli_test::Cli;

constexpr const char* kSlots =
    R"({"info":{"url":null,"contacts":[]},"paused":false,"slots":[)"
    R"({"time":"2015-09-13T02:00:00.000Z","status":"FAILURE","externalID":"cmd-2","retryCount":1},)"
    R"({"time":"2015-09-13T01:00:00.000Z","status":"SUCCESS","externalID":"cmd-1","retryCount":0}]})";

TEST_CASE("Every command answers --help with its usage, and exit 0") {
  Cli cli;
  for (const CliCommandInfo& command : cli_commands()) {
    INFO(command.name);
    CHECK(cli.run({command.name, "--help"}) == kExitOk);
    CHECK(cli.out.str().rfind("usage: celos " + command.name, 0) == 0);
    CHECK(cli.run({"help", command.name}) == kExitOk);
  }
  CHECK(cli.http.requests.empty());
  CHECK(cli.run({"--help"}) == kExitOk);
  CHECK(cli.out.str().find("rerun") != std::string::npos);
}

TEST_CASE("Bad usage exits 2 with that command's usage, and asks the server nothing") {
  Cli cli;
  CHECK(cli.run({"slots"}) == kExitUsage);
  CHECK(cli.err.str().find("celos slots: missing arguments") == 0);
  CHECK(cli.err.str().find("usage: celos slots W") != std::string::npos);
  CHECK(cli.run({"why", "wf", "yesterday"}) == kExitUsage);
  CHECK(cli.err.str().find("usage: celos why W T") != std::string::npos);
  CHECK(cli.run({"frobnicate"}) == kExitUsage);
  CHECK(cli.err.str().find("unknown command \"frobnicate\"") != std::string::npos);
  CHECK(cli.run({}) == kExitUsage);
  CHECK(cli.run({"rerun", "wf"}) == kExitUsage);
  CHECK(cli.run({"maintenance", "sideways"}) == kExitUsage);
  CHECK(cli.run({"status", "--failed", "--running"}) == kExitUsage);
  CHECK(cli.http.requests.empty());
}

TEST_CASE("No connection exits 3, a server error exits 1 with its JSON on one line") {
  Cli cli;
  cli.http.on([](const HttpRequest& r) -> std::optional<Result<HttpResponse>> {
    if (r.url.find("refused") == std::string::npos) return std::nullopt;
    return fail("GET " + r.url + ": Couldn't connect to server", ErrorCode::kUnavailable);
  });
  cli.answer("/api/v1/workflow-slots", "{\n \"error\": \"unknown workflow: nope\"\n}\n", 404);
  CHECK(cli.run({"slots", "nope"}) == kExitServerError);
  CHECK(cli.err.str() ==
        "celos slots: celos-server answered 404: {\"error\":\"unknown workflow: nope\"}\n");
  CHECK(cli.out.str().empty());
  CHECK(cli.run({"--server", "http://refused:1", "slots", "wf"}) == kExitNoConnection);
  CHECK(cli.err.str().find("no connection to celos-server at http://refused:1") !=
        std::string::npos);
}

TEST_CASE("With -o json the route's answer is printed unchanged, people get an aligned table") {
  Cli cli;
  cli.answer("/api/v1/workflow-slots?id=wf&start=2015-09-13T00%3A00%3A00.000Z", kSlots);
  REQUIRE(cli.run({"slots", "wf", "--from", "2015-09-13T00:00Z", "-o", "json"}) == kExitOk);
  CHECK(cli.out.str() == std::string(kSlots) + "\n");
  REQUIRE(cli.run({"--tz", "+02:00", "slots", "wf", "--from", "2015-09-13T02:00"}) == kExitOk);
  CHECK(cli.out.str() ==
        "SLOT                    STATUS   RETRIES  EXTERNAL ID\n"
        "2015-09-13T04:00+02:00  FAILURE  1        cmd-2\n"
        "2015-09-13T03:00+02:00  SUCCESS  0        cmd-1\n");
}

TEST_CASE("Colours only when stdout is a terminal, never with -o json") {
  Cli cli;
  cli.answer("/api/v1/workflow-slots", kSlots);
  REQUIRE(cli.run({"slots", "wf"}) == kExitOk);
  CHECK(cli.out.str().find('\033') == std::string::npos);
  cli.env.terminal = true;
  REQUIRE(cli.run({"slots", "wf"}) == kExitOk);
  CHECK(cli.out.str().find("\033[31mFAILURE") != std::string::npos);
  REQUIRE(cli.run({"slots", "wf", "-o", "json"}) == kExitOk);
  CHECK(cli.out.str().find('\033') == std::string::npos);
}

TEST_CASE("The token comes from --token-file, else CELOS_TOKEN, as a bearer header") {
  celos::testing::TempDir dir;
  const std::string file = dir / "token";
  std::ofstream(file) << "s3cret\n";
  Cli cli;
  cli.env.token = "from-env";
  cli.answer("/api/v1/version", R"({"version":"0.1.0"})");
  REQUIRE(cli.run({"version"}) == kExitOk);
  CHECK(cli.http.requests.back().headers == HttpHeaders{{"Authorization", "Bearer from-env"}});
  REQUIRE(cli.run({"version", "--token-file", file}) == kExitOk);
  CHECK(cli.http.requests.back().headers == HttpHeaders{{"Authorization", "Bearer s3cret"}});
  CHECK(cli.run({"version", "--token-file", file + ".missing"}) == kExitUsage);
  CHECK(cli.err.str().find(file + ".missing") != std::string::npos);
}

TEST_CASE("why prints the trigger tree indented, what is missing in red on a terminal") {
  Cli cli;
  cli.answer(
      "/api/v1/trigger-status?id=wf&time=2015-09-13T02%3A00%3A00.000Z",
      R"({"type":"AndTrigger","ready":false,"description":"Not all ready","subStatuses":[)"
      R"({"type":"DelayTrigger","ready":false,"description":"Delayed","subStatuses":[]},)"
      R"({"type":"AlwaysTrigger","ready":true,"description":"Always ready","subStatuses":[]}]})");
  REQUIRE(cli.run({"why", "wf", "2015-09-13T02:00Z"}) == kExitOk);
  CHECK(cli.out.str() ==
        "missing AndTrigger: Not all ready\n"
        "  missing DelayTrigger: Delayed\n"
        "  ready   AlwaysTrigger: Always ready\n");
  cli.env.terminal = true;
  REQUIRE(cli.run({"why", "wf", "2015-09-13T02:00Z"}) == kExitOk);
  CHECK(cli.out.str().find("  \033[31mmissing\033[0m DelayTrigger") != std::string::npos);
}

TEST_CASE("why says when a slot whose data check backs off is checked again") {
  Cli cli;
  cli.answer("/api/v1/trigger-status?id=wf&time=2015-09-13T02%3A00%3A00.000Z",
             R"({"type":"HDFSCheckTrigger","ready":false,"description":"HDFS path /in is not )"
             R"(ready","subStatuses":[],"nextCheckAt":"2015-09-13T02:41:00.000Z"})");
  REQUIRE(cli.run({"why", "wf", "2015-09-13T02:00Z"}) == kExitOk);
  CHECK(cli.out.str().find("data checked again at 2015-09-13T02:41") != std::string::npos);
}

constexpr const char* kMulti =
    R"({"workflows":[{"id":"a","info":{},"paused":false,"slots":[)"
    R"({"time":"2015-09-13T02:00:00.000Z","status":"RUNNING","externalID":"x","retryCount":0},)"
    R"({"time":"2015-09-13T01:00:00.000Z","status":"SUCCESS","externalID":"y","retryCount":0}]},)"
    R"({"id":"b","info":{},"paused":true,"slots":[)"
    R"({"time":"2015-09-13T02:00:00.000Z","status":"FAILURE","externalID":"z","retryCount":0}]}]})";

TEST_CASE("status shows each workflow's latest slots and filters them") {
  Cli cli;
  cli.answer("/api/v1/multi-workflow-slots", kMulti);
  REQUIRE(cli.run({"status", "--from", "2015-09-13T00:00Z"}) == kExitOk);
  CHECK(cli.out.str() ==
        "WORKFLOW  LAST SLOT          STATUS            FAILED  RUNNING  WAITING  RECENT\n"
        "a         2015-09-13T02:00Z  RUNNING           0       1        0        .R\n"
        "b         2015-09-13T02:00Z  FAILURE (paused)  1       0        0        F\n");
  REQUIRE(cli.run({"status", "--from", "2015-09-13T00:00Z", "--failed"}) == kExitOk);
  CHECK(cli.out.str().find("\na ") == std::string::npos);
  CHECK(cli.out.str().find("\nb ") != std::string::npos);
  REQUIRE(cli.run({"status", "--running", "-o", "json", "--from", "2015-09-13T00:00Z"}) == kExitOk);
  CHECK(cli.out.str().find(R"({"workflows":[{"id":"a")") == 0);
  CHECK(cli.out.str().find(R"("id":"b")") == std::string::npos);
}

TEST_CASE("status --group takes the group from celos-ui's config") {
  celos::testing::TempDir dir;
  const std::string config = dir / "ui.json";
  std::ofstream(config) << R"({"groups":[{"name":"night","workflows":["b"]}]})";
  Cli cli;
  cli.answer("/api/v1/multi-workflow-slots", kMulti);
  CHECK(cli.run({"status", "--group", "night"}) == kExitUsage);
  CHECK(cli.err.str().find("CELOS_UI_CONFIG") != std::string::npos);
  cli.env.ui_config = config;
  REQUIRE(cli.run({"status", "--group", "night"}) == kExitOk);
  CHECK(cli.out.str().find("\nb ") != std::string::npos);
  CHECK(cli.out.str().find("\na ") == std::string::npos);
  CHECK(cli.run({"status", "--group", "day"}) == kExitUsage);
}

TEST_CASE("log --follow prints each new piece of output once, until the slot ends") {
  Cli cli;
  std::vector<std::string> tails = {"one\n", "one\ntwo\n", "one\ntwo\n", "two\nthree\n"};
  std::size_t polls = 0;
  cli.http.on([&](const HttpRequest& r) -> std::optional<Result<HttpResponse>> {
    if (r.url.find("/slot-log") != std::string::npos) {
      return HttpResponse{200, {}, tails[std::min(polls++, tails.size() - 1)]};
    }
    const char* status = polls >= tails.size() - 1 ? "SUCCESS" : "RUNNING";
    return HttpResponse{200, {}, fmt::format(R"({{"status":"{}"}})", status)};
  });
  REQUIRE(cli.run({"log", "wf", "2015-09-13T01:00Z", "--follow", "--stderr"}) == kExitOk);
  CHECK(cli.out.str() == "one\ntwo\nthree\n");
  CHECK(cli.http.requests.front().url.find("stream=stderr") != std::string::npos);
  CHECK(cli.clock.sleeps == 2);  // half a second apart: new output within a second
}

TEST_CASE("maintenance --wait returns once no slot runs") {
  Cli cli;
  int gets = 0;
  cli.http.on([&](const HttpRequest& r) -> std::optional<Result<HttpResponse>> {
    const int running = r.method == "POST" ? 2 : std::max(0, 1 - gets++);
    return HttpResponse{200,
                        {},
                        fmt::format(R"({{"mode":"drain","reason":"patch",)"
                                    R"("since":"2015-09-13T01:00:00.000Z","running":{}}})",
                                    running)};
  });
  REQUIRE(cli.run({"maintenance", "drain", "--reason", "patch", "--wait"}) == kExitOk);
  CHECK(cli.out.str() == "maintenance: drain (patch) since 2015-09-13T01:00Z; running slots: 0\n");
  CHECK(cli.err.str() == "waiting: 2 slots running\nwaiting: 1 slots running\n");
  CHECK(cli.urls().front() == "POST http://celos:8080/api/v1/maintenance?mode=drain&reason=patch");
}

}  // namespace

namespace {

TEST_CASE("preview prints each slot with its local time and DST rule, warnings on stderr") {
  Cli cli;
  cli.answer("/api/v1/schedule-preview?id=wf&start=2026-03-29T00%3A00%3A00.000Z",
             R"({"id":"wf","timeZone":"Europe/Paris","tzdata":"2025b","slots":[)"
             R"({"time":"2026-03-29T01:30:00.000Z","local":"2026-03-29T03:30:00+02:00",)"
             R"("rule":"shift"}],"warnings":["02:30 does not exist"]})");
  REQUIRE(cli.run({"preview", "wf", "--from", "2026-03-29T00:00Z"}) == kExitOk);
  CHECK_THAT(cli.out.str(), Catch::Contains("time zone Europe/Paris (tzdata 2025b)") &&
                                Catch::Contains("2026-03-29T03:30:00+02:00") &&
                                Catch::Contains("shift"));
  CHECK(cli.err.str() == "warning: 02:30 does not exist\n");
  CHECK(cli.run({"preview"}) == kExitUsage);
}

}  // namespace
