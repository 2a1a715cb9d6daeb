// The real process runner runs real programs here: /bin/sh, cat, sleep.
#include "celos/process_runner.h"

#include <catch2/catch.hpp>

namespace celos {
namespace {

ProcessRequest sh(std::string script,
                  std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  ProcessRequest request;
  request.argv = {"/bin/sh", "-c", std::move(script)};
  request.timeout = timeout;
  return request;
}

TEST_CASE("process runner captures stdout, stderr and the exit status") {
  auto out = make_process_runner()->run(sh("echo out; echo err >&2; exit 3"));
  REQUIRE(out);
  CHECK(out->exit_code == 3);
  CHECK(out->out == "out\n");
  CHECK(out->err == "err\n");
}

TEST_CASE("process runner passes arguments as they are, with no shell") {
  ProcessRequest request;
  request.argv = {"printf", "%s|", "a b", "$(echo no)", "; rm -rf /"};
  auto out = make_process_runner()->run(request);
  REQUIRE(out);
  CHECK(out->out == "a b|$(echo no)|; rm -rf /|");
}

TEST_CASE("process runner feeds standard input and adds environment variables") {
  ProcessRequest request = sh("cat; printf '%s' \"$CELOS_TEST_VAR\"");
  request.input = std::string(300000, 'x');  // more than a pipe holds
  request.env = {{"CELOS_TEST_VAR", "v a l"}};
  auto out = make_process_runner()->run(request);
  REQUIRE(out);
  CHECK(out->out == std::string(300000, 'x') + "v a l");
}

TEST_CASE("a program that exits without reading its input does not take the caller down") {
  ProcessRequest request = sh("exit 4");
  request.input = std::string(4 * 1024 * 1024, 'x');  // far more than a socket buffer holds
  auto out = make_process_runner()->run(request);
  REQUIRE(out);
  CHECK(out->exit_code == 4);
}

TEST_CASE("process runner kills a program that does not end within its timeout") {
  const auto started = std::chrono::steady_clock::now();
  auto out = make_process_runner()->run(sh("sleep 30", std::chrono::milliseconds(200)));
  REQUIRE_FALSE(out);
  CHECK(out.error().code == ErrorCode::kFailed);
  CHECK(out.error().message.find("did not answer within 0.2 s") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
}

TEST_CASE("process runner reports a program that does not exist") {
  ProcessRequest request;
  request.argv = {"/nonexistent/sbatch", "--parsable"};
  auto out = make_process_runner()->run(request);
  REQUIRE_FALSE(out);
  CHECK(out.error().message.find("/nonexistent/sbatch") != std::string::npos);
}

TEST_CASE("describe_command quotes what a shell would split") {
  CHECK(describe_command({"sbatch", "--job-name=wc@2015-09-12T20:00Z", "a b", "it's"}) ==
        "sbatch --job-name=wc@2015-09-12T20:00Z 'a b' 'it'\\''s'");
}

}  // namespace
}  // namespace celos
