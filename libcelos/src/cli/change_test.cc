// rerun and kill: one slot, ranges, the dry run above 100 slots, refusals.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "cli/cli_test_util.h"

namespace {

using namespace celos;
using celos::cli_test::Cli;

// A range answer with `n` slots moved and `skipped` skipped.
std::string range_answer(bool dry, int n, int skipped = 0) {
  std::string slots, skips;
  for (int i = 0; i < n; ++i) {
    slots +=
        fmt::format(R"({}{{"time":"2015-09-{:02}T00:00:00.000Z","from":"FAILURE","to":"WAITING"}})",
                    i ? "," : "", 1 + i % 28);
  }
  for (int i = 0; i < skipped; ++i) {
    skips += fmt::format(R"({}{{"time":"2015-09-13T05:00:00.000Z","status":"RUNNING",)"
                         R"("reason":"a RUNNING slot cannot be rerun"}})",
                         i ? "," : "");
  }
  return fmt::format(R"({{"dryRun":{},"slots":[{}],"skipped":[{}]}})", dry, slots, skips);
}

// Answers range requests: dry runs with `n` slots, real runs with `n` slots and `skipped`.
void serve_range(Cli& cli, int n, int skipped = 0) {
  cli.http.on([=](const HttpRequest& r) -> std::optional<Result<HttpResponse>> {
    const bool dry = r.url.find("dryRun=true") != std::string::npos;
    return HttpResponse{200, {}, range_answer(dry, n, dry ? 0 : skipped)};
  });
}

const std::vector<std::string> kRange = {
    "rerun", "wf", "--from", "2015-09-01T00:00Z", "--to", "2015-09-13T00:00Z"};

TEST_CASE("rerun of one slot posts it and shows the new state") {
  Cli cli;
  cli.answer(
      "/api/v1/rerun?id=wf&time=2015-09-13T01%3A00%3A00.000Z",
      R"({"time":"2015-09-13T01:00:00.000Z","status":"WAITING","externalID":null,"retryCount":0})");
  REQUIRE(cli.run({"rerun", "wf", "2015-09-13T01:00Z"}) == kExitOk);
  CHECK(cli.out.str() == "rerun wf 2015-09-13T01:00Z: now WAITING\n");
  CHECK(cli.urls().size() == 1);
  CHECK(cli.urls()[0].rfind("POST ", 0) == 0);
  CHECK(cli.run({"rerun", "wf", "2015-09-13T01:00Z", "--from", "2015-09-13T00:00Z"}) == kExitUsage);
}

TEST_CASE("A range of at most 100 slots is done after a dry run counted it") {
  Cli cli;
  serve_range(cli, 3);
  REQUIRE(cli.run(kRange) == kExitOk);
  REQUIRE(cli.urls().size() == 2);
  CHECK(cli.urls()[0].find("dryRun=true") != std::string::npos);
  CHECK(cli.urls()[1].find("dryRun") == std::string::npos);
  CHECK(cli.out.str().rfind("rerun wf: 3 slots\nSLOT", 0) == 0);
}

TEST_CASE("A range of more than 100 slots is a dry run unless --yes, and says how to confirm") {
  Cli cli;
  serve_range(cli, 101);
  REQUIRE(cli.run(kRange) == kExitOk);
  CHECK(cli.urls().size() == 1);
  CHECK(cli.urls()[0].find("dryRun=true") != std::string::npos);
  CHECK(cli.out.str().rfind("dry run: would rerun wf: 101 slots\n", 0) == 0);
  CHECK(cli.out.str().find("this was a dry run: 101 slots is more than 100; to do it: celos rerun "
                           "wf --from 2015-09-01T00:00:00.000Z --to 2015-09-13T00:00:00.000Z "
                           "--yes\n") != std::string::npos);
  // -o json: the dry run's JSON alone on stdout, the note on stderr.
  REQUIRE(cli.run({"rerun", "wf", "--from", "2015-09-01T00:00Z", "--to", "2015-09-13T00:00Z", "-o",
                   "json"}) == kExitOk);
  CHECK(cli.out.str() == range_answer(true, 101) + "\n");
  CHECK(cli.err.str().find("this was a dry run") == 0);
  cli.http.requests.clear();
  auto yes = kRange;
  yes.push_back("--yes");
  REQUIRE(cli.run(yes) == kExitOk);
  REQUIRE(cli.urls().size() == 1);
  CHECK(cli.urls()[0].find("dryRun") == std::string::npos);
}

TEST_CASE("A dry run changes nothing, whatever the size") {
  Cli cli;
  serve_range(cli, 2);
  auto args = kRange;
  args.push_back("--dry-run");
  args.push_back("--yes");
  REQUIRE(cli.run(args) == kExitOk);
  CHECK(cli.urls().size() == 1);
  CHECK(cli.urls()[0].find("dryRun=true") != std::string::npos);
  CHECK(cli.out.str().find("this was a dry run") == std::string::npos);
}

TEST_CASE("Slots the server skipped make the exit code 1, and are listed") {
  Cli cli;
  serve_range(cli, 2, 1);
  auto args = kRange;
  args[0] = "kill";
  args.push_back("--status");
  args.push_back("RUNNING");
  CHECK(cli.run(args) == kExitServerError);
  CHECK(cli.out.str().find("skipped: 1\n") != std::string::npos);
  CHECK(cli.err.str() == "celos kill: 1 slot could not be killed\n");
  CHECK(cli.urls().back().find("status=RUNNING") != std::string::npos);
}

}  // namespace

TEST_CASE("deadline moves one slot's deadline, deadlines lists them with their state") {
  Cli cli;
  cli.answer(
      "/api/v1/deadline?id=wf&time=2015-09-13T01%3A00%3A00.000Z&deadline=2015-09-13T"
      "06%3A00%3A00.000Z",
      R"({"time":"2015-09-13T01:00:00.000Z","status":"WAITING","externalID":null,)"
      R"("retryCount":0,"deadline":"2015-09-13T06:00:00.000Z"})");
  REQUIRE(cli.run({"deadline", "wf", "2015-09-13T01:00Z", "2015-09-13T06:00Z"}) == kExitOk);
  CHECK(cli.out.str() == "wf 2015-09-13T01:00Z: deadline 2015-09-13T06:00Z\n");
  CHECK(cli.urls()[0].rfind("POST ", 0) == 0);
  CHECK(cli.run({"deadline", "wf", "2015-09-13T01:00Z"}) == kExitUsage);
  cli.http.on([](const HttpRequest& r) -> std::optional<Result<HttpResponse>> {
    if (r.url.find("/api/v1/deadlines?") == std::string::npos) return std::nullopt;
    return HttpResponse{200,
                        {},
                        R"({"deadlines":[{"workflow":"wf","time":"2015-09-13T01:00:00.000Z",)"
                        R"("deadline":"2015-09-13T06:00:00.000Z","state":"AT_RISK",)"
                        R"("predictedFinish":"2015-09-13T06:30:00.000Z","reason":"input late"}]})"};
  });
  REQUIRE(cli.run({"deadlines", "--state", "AT_RISK,MISSED"}) == kExitOk);
  CHECK(cli.out.str().find("AT_RISK") != std::string::npos);
  CHECK(cli.out.str().find("input late") != std::string::npos);
  CHECK(cli.urls().back().find("state=AT_RISK") != std::string::npos);
}
