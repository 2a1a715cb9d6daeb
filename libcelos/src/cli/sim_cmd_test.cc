// celos simulate and celos plan: commands that run here, without a server.
#include <catch2/catch.hpp>

#include "cli/cli_test_util.h"
#include "testing/temp_dir.h"

namespace {

using namespace celos;
using celos::cli_test::Cli;
using celos::testing::TempDir;
using celos::testing::write_text_file;

constexpr const char* kWorkflow =
    "celos.defineWorkflow({id: 'hourly', schedule: celos.hourlySchedule(), "
    "schedulingStrategy: celos.serialSchedulingStrategy(), trigger: celos.alwaysTrigger(), "
    "externalService: celos.commandExternalService('true'), startTime: '2015-09-13T00:00Z'});";

TEST_CASE("celos simulate runs a scenario without a server, exit 1 when an expectation fails") {
  TempDir dir;
  write_text_file(dir / "workflows/hourly.js", kWorkflow);
  write_text_file(dir / "ok.json", R"({"workflows": "workflows", "start": "2015-09-13T00:00Z",
      "end": "2015-09-13T06:00Z", "step": "10m", "jobs": [{"duration": "15m"}],
      "expect": [{"count": "hourly", "state": "SUCCESS", "equals": 6}]})");
  write_text_file(dir / "bad.json", R"({"workflows": "workflows", "start": "2015-09-13T00:00Z",
      "end": "2015-09-13T06:00Z",
      "expect": [{"workflow": "hourly", "slot": "2015-09-13T01:00Z", "state": "FAILURE"}]})");
  Cli cli;
  cli.env.server = "not a url";  // not needed, so not checked
  CHECK(cli.run({"simulate", dir / "ok.json"}) == kExitOk);
  INFO(cli.out.str() << cli.err.str());
  CHECK(cli.out.str().find("PASS expect[0]") != std::string::npos);
  CHECK(cli.run({"simulate", dir / "bad.json", "-o", "json"}) == kExitServerError);
  CHECK(cli.out.str().find(R"("passed":false)") != std::string::npos);
  CHECK(cli.err.str().find("expected FAILURE, actual SUCCESS") != std::string::npos);
  CHECK(cli.err.str().find("celos simulate: expectations failed") != std::string::npos);
  CHECK(cli.http.requests.empty());
}

TEST_CASE("celos simulate: a malformed scenario exits 2 naming the file and line, no usage") {
  TempDir dir;
  write_text_file(dir / "broken.json", "{\n  \"workflows\": \"w\",\n  \"start\": ,\n}\n");
  Cli cli;
  CHECK(cli.run({"simulate", dir / "broken.json"}) == kExitUsage);
  CHECK(cli.err.str().find("broken.json: line 3, column 12: not valid JSON") != std::string::npos);
  CHECK(cli.err.str().find("usage:") == std::string::npos);
  CHECK(cli.run({"simulate"}) == kExitUsage);
  CHECK(cli.err.str().find("usage: celos simulate SCENARIO") != std::string::npos);
  CHECK(cli.run({"simulate", dir / "broken.json", "--until", "someday"}) == kExitUsage);
}

TEST_CASE("celos plan compares two directories, --from and --to are required") {
  TempDir dir;
  write_text_file(dir / "old/workflows/hourly.js", kWorkflow);
  std::string moved = kWorkflow;
  moved.replace(moved.find("celos.hourlySchedule()"), 22, "celos.cronSchedule('0 15 * * * ?')");
  write_text_file(dir / "new/workflows/hourly.js", moved);
  Cli cli;
  CHECK(cli.run({"plan", "--from", dir / "old", "--to", dir / "new", "--at", "2015-09-13", "--days",
                 "1", "-o", "json"}) == kExitOk);
  CHECK(cli.out.str().find(R"("moved":[{"workflow":"hourly","from":"2015-09-13T00:00:00.000Z",)"
                           R"("to":"2015-09-13T00:15:00.000Z"})") != std::string::npos);
  CHECK(cli.run({"plan", "--from", dir / "old"}) == kExitUsage);
  CHECK(cli.err.str().find("--from and --to are required") != std::string::npos);
  CHECK(cli.run({"plan", "--from", dir / "old", "--to", dir / "new", "--days", "0"}) == kExitUsage);
  CHECK(cli.run({"plan", "--from", dir / "old", "--to", dir / "none"}) == kExitUsage);
  CHECK(cli.err.str().find("none: no workflows/ directory") != std::string::npos);
  CHECK(cli.http.requests.empty());
}

}  // namespace
