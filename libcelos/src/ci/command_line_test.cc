#include <initializer_list>
#include <vector>

#include <catch2/catch.hpp>

#include "celos/deploy.h"

namespace celos {
namespace {

Result<CiCommandLine> parse(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"celos-ci"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse_ci_command_line(static_cast<int>(argv.size()), argv.data());
}

std::string error_of(std::initializer_list<const char*> args) {
  auto result = parse(args);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::kInvalid);
  CHECK(result.error().message.find('\n') == std::string::npos);
  return result.error().message;
}

TEST_CASE("a complete deploy command line is accepted with the documented defaults") {
  auto result = parse({"--mode", "deploy", "--workflowName", "wordcount", "--target",
                       "file:///etc/celos/target.json"});
  REQUIRE(result);
  REQUIRE(result->options);
  CHECK(result->options->mode == DeployMode::kDeploy);
  CHECK(result->options->workflow_name == "wordcount");
  CHECK(result->options->target_url == "file:///etc/celos/target.json");
  CHECK(result->options->deploy_dir == ".");
  CHECK(result->options->hdfs_root == "/user/celos/app");
  CHECK_FALSE(result->options->accept_new_host_key);
}

TEST_CASE("undeploy, a deployment directory, an hdfs root and key acceptance are read") {
  auto result = parse({"--mode=undeploy", "--workflowName=wc", "--target=sftp://h/t.json",
                       "--deployDir", "/src/wc", "--hdfsRoot", "/apps", "--accept-new-host-key"});
  REQUIRE(result);
  REQUIRE(result->options);
  CHECK(result->options->mode == DeployMode::kUndeploy);
  CHECK(result->options->deploy_dir == "/src/wc");
  CHECK(result->options->hdfs_root == "/apps");
  CHECK(result->options->accept_new_host_key);
}

TEST_CASE("help gives the usage text and no options") {
  auto result = parse({"--help"});
  REQUIRE(result);
  CHECK_FALSE(result->options);
  CHECK(result->help.find("--workflowName") != std::string::npos);
  CHECK(result->help.find("--hdfsRoot") != std::string::npos);
}

TEST_CASE("a missing workflow name is one clear line") {
  CHECK(error_of({"--mode", "deploy", "--target", "file:///t.json"}) == "missing --workflowName");
}

TEST_CASE("an unknown mode is rejected naming it") {
  CHECK(error_of({"--mode", "redeploy", "--workflowName", "w", "--target", "file:///t"})
            .find("redeploy") != std::string::npos);
}

TEST_CASE("a missing mode or target is rejected") {
  CHECK(error_of({"--workflowName", "w", "--target", "file:///t"}).find("--mode") !=
        std::string::npos);
  CHECK(error_of({"--mode", "deploy", "--workflowName", "w"}).find("--target") !=
        std::string::npos);
}

TEST_CASE("an hdfs root that is relative or ends in a slash is rejected") {
  CHECK(error_of({"--mode", "deploy", "--workflowName", "w", "--target", "file:///t", "--hdfsRoot",
                  "user/celos"})
            .find("absolute") != std::string::npos);
  CHECK(error_of({"--mode", "deploy", "--workflowName", "w", "--target", "file:///t", "--hdfsRoot",
                  "/user/celos/"})
            .find("must not end in '/'") != std::string::npos);
}

TEST_CASE("a workflow name that is a path is rejected") {
  CHECK(error_of({"--mode", "deploy", "--workflowName", "../x", "--target", "file:///t"})
            .find("plain name") != std::string::npos);
  CHECK(
      error_of({"--mode", "deploy", "--workflowName", "", "--target", "file:///t"}).find("empty") !=
      std::string::npos);
}

TEST_CASE("a target that is not a file: or sftp: URL is rejected") {
  CHECK(error_of({"--mode", "deploy", "--workflowName", "w", "--target", "http://x/t.json"})
            .find("--target") != std::string::npos);
}

TEST_CASE("an unknown option is rejected") {
  CHECK_FALSE(error_of({"--mode", "deploy", "--bogus"}).empty());
}

}  // namespace
}  // namespace celos

namespace celos {
namespace {

TEST_CASE("The plan flag is read with deploy and refused with undeploy") {
  const char* deploy_args[] = {"celos-ci", "--mode",   "deploy",         "--workflowName",
                               "wc",       "--target", "file:///t.json", "--plan"};
  auto line = parse_ci_command_line(8, deploy_args);
  REQUIRE(line);
  CHECK(line->options->plan);
  const char* undeploy_args[] = {"celos-ci", "--mode",   "undeploy",       "--workflowName",
                                 "wc",       "--target", "file:///t.json", "--plan"};
  auto refused = parse_ci_command_line(8, undeploy_args);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "--plan goes with --mode deploy");
}

}  // namespace
}  // namespace celos
