#include "cli/parse.h"

#include <catch2/catch.hpp>

#include "cli/command.h"
#include "cli/format.h"

namespace {

using namespace celos;
using namespace celos::cli;

TEST_CASE("Global options stand before or after the command, in both spellings") {
  const CliEnvironment env{.server = "http://env:1", .token = "from-env"};
  auto line =
      parse_globals({"--server", "http://a:1/", "slots", "wf", "-o", "json", "--tz=+02:00"}, env);
  REQUIRE(line);
  CHECK(line->command == "slots");
  CHECK(line->rest == std::vector<std::string>{"wf"});
  CHECK(line->globals.server == "http://a:1");
  CHECK(line->globals.json);
  CHECK(line->globals.tz == std::chrono::minutes(120));
  CHECK(line->globals.token == "from-env");
  auto after = parse_globals({"why", "wf", "T", "--server=http://b:2", "-ojson"}, env);
  REQUIRE(after);
  CHECK(after->globals.server == "http://b:2");
  CHECK(after->globals.json);
  CHECK(after->rest == std::vector<std::string>{"wf", "T"});
}

TEST_CASE("The server comes from --server, else CELOS_SERVER, else the default port") {
  CHECK(parse_globals({"status"}, {})->globals.server == kDefaultCelosServer);
  CHECK(parse_globals({"status"}, {.server = "http://e:9"})->globals.server == "http://e:9");
  auto bad_env = parse_globals({"status"}, {.server = "/usr/bin/celos-server"});
  REQUIRE(bad_env);
  CHECK(check_server(bad_env->globals).error().message ==
        "CELOS_SERVER: not an http(s):// URL: \"/usr/bin/celos-server\"");
}

TEST_CASE("Bad global options are usage errors naming the option") {
  for (const auto& args : std::vector<std::vector<std::string>>{{"status", "-o", "yaml"},
                                                                {"status", "--server"},
                                                                {"status", "--server", "ftp://x"},
                                                                {"status", "--tz", "Europe/Berlim"},
                                                                {"status", "--tz", "+25:00"}}) {
    auto line = parse_globals(args, {});
    REQUIRE_FALSE(line);
    CHECK(line.error().code == ErrorCode::kInvalid);
  }
  CHECK_THAT(parse_globals({"status", "--tz", "Europe/Berlim"}, {}).error().message,
             Catch::StartsWith("--tz: \"Europe/Berlim\" is not UTC, an offset like +02:00 or a "
                               "time zone: unknown time zone \"Europe/Berlim\""));
}

TEST_CASE("A command's options and positionals are checked against its spec") {
  const CommandSpec spec{.name = "slots",
                         .options = {{"--from", "T", ""}, {"--yes", "", ""}},
                         .min_args = 1,
                         .max_args = 1};
  auto ok = parse_args(spec, {"wf", "--from", "2015-09-13T00:00Z", "--yes"});
  REQUIRE(ok);
  CHECK(ok->positional == std::vector<std::string>{"wf"});
  CHECK(*ok->value("--from") == "2015-09-13T00:00Z");
  CHECK(ok->has("--yes"));
  CHECK(parse_args(spec, {"wf", "--from=2015-09-13T00:00Z"})->value("--from") != nullptr);
  CHECK(parse_args(spec, {"wf", "--nope"}).error().message == "unknown option --nope");
  CHECK(parse_args(spec, {"wf", "--from"}).error().message == "--from needs a value (T)");
  CHECK(parse_args(spec, {}).error().message == "missing arguments");
  CHECK(parse_args(spec, {"a", "b"}).error().message == "unexpected argument \"b\"");
  CHECK(parse_args(spec, {"--", "-dash-id"})->positional == std::vector<std::string>{"-dash-id"});
}

TEST_CASE("Typed times take Z, an offset, or --tz, and reach the server in UTC") {
  Globals utc;
  CHECK(*server_time("2015-09-13T13:00Z", utc, "T") == "2015-09-13T13:00:00.000Z");
  CHECK(*server_time("2015-09-13T15:00+02:00", utc, "T") == "2015-09-13T13:00:00.000Z");
  CHECK(*server_time("2015-09-13T13:00", utc, "T") == "2015-09-13T13:00:00.000Z");
  CHECK(*server_time("2015-09-13", utc, "T") == "2015-09-13T00:00:00.000Z");
  Globals plus2;
  REQUIRE(parse_tz("+02:00", plus2));
  CHECK(*server_time("2015-09-13T15:00", plus2, "T") == "2015-09-13T13:00:00.000Z");
  CHECK(*server_time("2015-09-13T13:00Z", plus2, "T") == "2015-09-13T13:00:00.000Z");
  CHECK(*server_time("2015-09-13T08:00-05:00", plus2, "T") == "2015-09-13T13:00:00.000Z");
  auto bad = server_time("yesterday", utc, "--from");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::kInvalid);
  CHECK(bad.error().message.find("--from") == 0);
}

TEST_CASE(
    "In a --tz zone, typed times are read at the offset in force then, DST by the schedules' "
    "defaults") {
  Globals paris;
  REQUIRE(parse_tz("Europe/Paris", paris));
  CHECK(*server_time("2026-07-01T06:00", paris, "T") == "2026-07-01T04:00:00.000Z");
  CHECK(*server_time("2026-01-01T06:00", paris, "T") == "2026-01-01T05:00:00.000Z");
  CHECK(*server_time("2026-07-01", paris, "T") == "2026-06-30T22:00:00.000Z");
  CHECK(*server_time("2026-07-01T06:00Z", paris, "T") == "2026-07-01T06:00:00.000Z");
  // 02:30 does not exist on 29 March 2026: later by the hour of the gap (03:30+02:00).
  CHECK(*server_time("2026-03-29T02:30", paris, "T") == "2026-03-29T01:30:00.000Z");
  // 02:30 happens twice on 25 October 2026: the first, still on summer time.
  CHECK(*server_time("2026-10-25T02:30", paris, "T") == "2026-10-25T00:30:00.000Z");
  REQUIRE(parse_tz("UTC", paris));
  CHECK_FALSE(paris.zone);
  CHECK(*server_time("2026-07-01T06:00", paris, "T") == "2026-07-01T06:00:00.000Z");
}

TEST_CASE("Times are shown in UTC or at the --tz offset, seconds only when there are any") {
  Globals g;
  CHECK(show_time(g, "2015-09-13T13:00:00.000Z") == "2015-09-13T13:00Z");
  CHECK(show_time(g, "2015-09-13T13:00:07.000Z") == "2015-09-13T13:00:07Z");
  REQUIRE(parse_tz("+02:00", g));
  CHECK(show_time(g, "2015-09-13T23:00:00.000Z") == "2015-09-14T01:00+02:00");
  REQUIRE(parse_tz("-05:30", g));
  CHECK(show_time(g, "2015-09-13T13:00:00.000Z") == "2015-09-13T07:30-05:30");
  CHECK(show_time(g, "not a time") == "not a time");
  REQUIRE(parse_tz("Europe/Paris", g));
  CHECK(show_time(g, "2026-03-29T00:30:00.000Z") == "2026-03-29T01:30+01:00");
  CHECK(show_time(g, "2026-03-29T01:30:00.000Z") == "2026-03-29T03:30+02:00");
  CHECK(show_time(g, "2026-10-25T00:30:00.000Z") == "2026-10-25T02:30+02:00");
  CHECK(show_time(g, "2026-10-25T01:30:00.000Z") == "2026-10-25T02:30+01:00");
  REQUIRE(parse_tz("Asia/Kolkata", g));
  CHECK(show_time(g, "2026-01-01T00:00:00.000Z") == "2026-01-01T05:30+05:30");
}

TEST_CASE("Tables align by characters and colour only when asked") {
  Table t({"ID", "STATUS"});
  t.add({{"ä-long-id"}, {"FAILURE", Color::kRed}});
  t.add({{"b"}, {"SUCCESS", Color::kGreen}});
  std::ostringstream plain, coloured;
  t.print(plain, false);
  CHECK(plain.str() == "ID         STATUS\nä-long-id  FAILURE\nb          SUCCESS\n");
  t.print(coloured, true);
  CHECK(coloured.str().find("\033[31mFAILURE\033[0m") != std::string::npos);
  CHECK(plain.str().find('\033') == std::string::npos);
}

TEST_CASE("A server's answer is shown on one line") {
  CHECK(one_line("{\n  \"error\": \"unknown workflow: x\"\n}") ==
        R"({"error":"unknown workflow: x"})");
  CHECK(one_line("Bad\nGateway\n") == "Bad Gateway");
}

TEST_CASE("Follow finds the new bytes as the overlap of two tails") {
  CHECK(log_overlap("", "abc") == 0);
  CHECK(log_overlap("ab", "abcd") == 2);            // grown below the tail
  CHECK(log_overlap("abcdef", "defghi") == 3);      // the tail moved by 3
  CHECK(log_overlap("aaaa", "aaaab") == 4);         // one repeated character
  CHECK(log_overlap("job one\n", "other\n") == 0);  // a new job: shown whole
}

}  // namespace
