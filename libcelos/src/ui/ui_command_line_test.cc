#include <initializer_list>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "celos/ui_options.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

Result<UiCommandLine> parse(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"celos-ui"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse_ui_command_line(static_cast<int>(argv.size()), argv.data(), "1.2.3");
}

std::string error_of(std::initializer_list<const char*> args) {
  auto result = parse(args);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::kInvalid);
  CHECK(result.error().message.find('\n') == std::string::npos);
  return result.error().message;
}

TEST_CASE("ui options: every value is read, and the defaults are SPEC §8's") {
  auto result = parse({"--port", "8081", "--celos", "http://127.0.0.1:8080", "--hue",
                       "https://hue:8888", "--config", "/etc/celos/ui.json", "--celos-token-file",
                       "/etc/celos/token", "--allowed-hosts", "a,b"});
  REQUIRE(result);
  REQUIRE(result->options);
  const UiOptions& o = *result->options;
  CHECK(o.port == 8081);
  CHECK(o.host == "127.0.0.1");
  CHECK(o.celos_url == "http://127.0.0.1:8080");
  CHECK(o.hue_url == "https://hue:8888");
  CHECK(o.config_path == "/etc/celos/ui.json");
  CHECK(o.token_file == "/etc/celos/token");
  CHECK(o.allowed_hosts == "a,b");

  auto minimal = parse({"--port=0", "--celos=https://celos", "--host", "0.0.0.0"});
  REQUIRE(minimal);
  REQUIRE(minimal->options);
  CHECK(minimal->options->port == 0);
  CHECK(minimal->options->host == "0.0.0.0");
  CHECK(minimal->options->hue_url.empty());
  CHECK_FALSE(minimal->options->allowed_hosts);
}

TEST_CASE("ui options: --help and --version print and run nothing") {
  auto help = parse({"--help"});
  REQUIRE(help);
  CHECK_FALSE(help->options);
  CHECK_THAT(help->print,
             Catch::Contains("Usage: celos-ui") && Catch::Contains("--celos-token-file"));
  auto version = parse({"--version"});
  REQUIRE(version);
  CHECK(version->print == "celos-ui 1.2.3\n");
}

TEST_CASE("ui options: each bad flag is refused naming it") {
  CHECK_THAT(error_of({"--celos", "http://c"}), Catch::Contains("--port is required"));
  CHECK_THAT(error_of({"--port", "70000", "--celos", "http://c"}), Catch::Contains("--port"));
  CHECK_THAT(error_of({"--port", "-1", "--celos", "http://c"}), Catch::Contains("--port"));
  CHECK_THAT(error_of({"--port", "x", "--celos", "http://c"}), Catch::Contains("port"));
  CHECK_THAT(error_of({"--port", "1"}), Catch::Contains("--celos is required"));
  CHECK_THAT(error_of({"--port", "1", "--celos", "ftp://c"}), Catch::Contains("--celos must"));
  CHECK_THAT(error_of({"--port", "1", "--celos", "http://c", "--hue", "hue"}),
             Catch::Contains("--hue must"));
  CHECK_THAT(error_of({"--port", "1", "--celos", "http://c", "--allowed-hosts", ""}),
             Catch::Contains("--allowed-hosts"));
  CHECK_THAT(error_of({"--port", "1", "--celos", "http://c", "--no-such-flag"}),
             Catch::Contains("no-such-flag") && Catch::Contains("--help"));
}

TEST_CASE("ui options: the config file must parse and the token file hold a token") {
  testing::TempDir dir;
  UiOptions o;
  o.port = 0;
  o.celos_url = "http://c";
  auto none = check_ui_files(o);
  REQUIRE(none);
  CHECK(none->empty());

  o.config_path = dir / "missing.json";
  auto missing = check_ui_files(o);
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error().message, Catch::Contains(o.config_path));

  testing::write_text_file(dir / "bad.json", "{\"groups\": [");
  o.config_path = dir / "bad.json";
  auto bad = check_ui_files(o);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::kInvalid);
  CHECK_THAT(bad.error().message, Catch::Contains(o.config_path));

  testing::write_text_file(dir / "ui.json", "{\"groups\": [{\"name\": \"g\", \"workflows\": []}]}");
  o.config_path = dir / "ui.json";
  testing::write_text_file(dir / "empty-token", "\nsecret\n");
  o.token_file = dir / "empty-token";
  auto empty = check_ui_files(o);
  REQUIRE_FALSE(empty);
  CHECK_THAT(empty.error().message,
             Catch::Contains("--celos-token-file") && Catch::Contains(o.token_file));

  testing::write_text_file(dir / "token", "secret\nignored\n");
  o.token_file = dir / "token";
  auto token = check_ui_files(o);
  REQUIRE(token);
  CHECK(*token == "secret");
}

}  // namespace
}  // namespace celos
