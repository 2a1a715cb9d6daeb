#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <stdlib.h>

#include "celos/server_options.h"

namespace celos {
namespace {
namespace fs = std::filesystem;

Result<ServerCommandLine> parse(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"celos-server"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse_server_command_line(static_cast<int>(argv.size()), argv.data(), "1.2.3");
}

std::string command_line_error(std::initializer_list<const char*> args) {
  auto result = parse(args);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::kInvalid);
  CHECK(result.error().message.find('\n') == std::string::npos);
  return result.error().message;
}

// A scratch directory removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "celos-options-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST_CASE("server options: defaults are SPEC §8's") {
  auto result = parse({"--port", "0"});
  REQUIRE(result);
  REQUIRE(result->options);
  const ServerOptions& o = *result->options;
  CHECK(o.port == 0);
  CHECK(o.host == "127.0.0.1");
  CHECK(o.workflows_dir == "/etc/celos/workflows");
  CHECK(o.defaults_dir == "/etc/celos/defaults");
  CHECK(o.logs_dir == "/var/log/celos");
  CHECK(o.db_dir == "/var/lib/celos/db");
  CHECK(o.hadoop_conf_dir == "/etc/hadoop/conf");
  CHECK_FALSE(o.hadoop_conf_given);
  CHECK_FALSE(o.create_db);
  CHECK(o.auto_schedule_seconds == 0);
  CHECK(o.slurm_bin_dir.empty());  // Slurm commands from PATH
  CHECK(o.oozie_notifications);
}

TEST_CASE("server options: --oozie-notifications is true or false, nothing else") {
  auto off = parse({"--port", "1", "--oozie-notifications=false"});
  REQUIRE(off);
  CHECK_FALSE(off->options->oozie_notifications);
  CHECK_THAT(command_line_error({"--port", "1", "--oozie-notifications", "no"}),
             Catch::Contains("--oozie-notifications must be true or false, not \"no\""));
}

TEST_CASE("server options: --data-check-backoff is --autoSchedule's period unless given") {
  CHECK(parse({"--port", "0"})->options->data_check_backoff_step() == 0);
  CHECK(parse({"--port", "0", "--autoSchedule", "60"})->options->data_check_backoff_step() == 60);
  auto given = parse({"--port", "0", "--autoSchedule", "60", "--data-check-backoff", "0"});
  CHECK(given->options->data_check_backoff_step() == 0);
  given = parse({"--port", "0", "--data-check-backoff", "30"});
  CHECK(given->options->data_check_backoff_step() == 30);
  CHECK(command_line_error({"--port", "0", "--data-check-backoff", "-1"})
            .find("--data-check-backoff") != std::string::npos);
  CHECK(command_line_error({"--port", "0", "--data-check-backoff", "1m"}).find("\"1m\"") !=
        std::string::npos);
}

TEST_CASE("server options: every value is read") {
  auto result =
      parse({"--port=8080", "--host", "0.0.0.0", "--workflows", "/w", "--defaults", "/d/", "--logs",
             "/l", "--db", "/db", "--create-db", "--autoSchedule", "60", "--hadoop-conf", "/h"});
  REQUIRE(result);
  const ServerOptions& o = *result->options;
  CHECK(o.port == 8080);
  CHECK(o.host == "0.0.0.0");
  CHECK(o.workflows_dir == "/w");
  CHECK(o.defaults_dir == "/d");
  CHECK(o.logs_dir == "/l");
  CHECK(o.db_dir == "/db");
  CHECK(o.create_db);
  CHECK(o.auto_schedule_seconds == 60);
  CHECK(o.hadoop_conf_dir == "/h");
  CHECK(o.hadoop_conf_given);
}

TEST_CASE("server options: relative directories become absolute against the current one") {
  auto result =
      parse({"--port", "1", "--db", "state/db", "--logs", "./logs", "--workflows", "../w"});
  REQUIRE(result);
  const fs::path cwd = fs::current_path();
  CHECK(result->options->db_dir == (cwd / "state/db").lexically_normal().string());
  CHECK(result->options->logs_dir == (cwd / "logs").lexically_normal().string());
  CHECK(result->options->workflows_dir == (cwd / "../w").lexically_normal().string());
  CHECK(fs::path(result->options->defaults_dir).is_absolute());
}

TEST_CASE("server options: help and version are texts to print") {
  auto help = parse({"--help"});
  REQUIRE(help);
  CHECK_FALSE(help->options);
  CHECK(help->print.find("--create-db") != std::string::npos);
  auto version = parse({"--version"});
  REQUIRE(version);
  CHECK(version->print == "celos-server 1.2.3\n");
}

TEST_CASE("server options: bad command lines are one line naming the flag") {
  CHECK_THAT(command_line_error({}), Catch::Contains("--port"));
  CHECK_THAT(command_line_error({"--port", "seventy"}), Catch::Contains("port"));
  CHECK_THAT(command_line_error({"--port", "70000"}), Catch::Contains("--port"));
  CHECK_THAT(command_line_error({"--port", "-1"}), Catch::Contains("--port"));
  CHECK_THAT(command_line_error({"--port", "1", "--autoSchedule", "0"}),
             Catch::Contains("--autoSchedule"));
  CHECK_THAT(command_line_error({"--port", "1", "--autoSchedule", "often"}),
             Catch::Contains("autoSchedule"));
  CHECK_THAT(command_line_error({"--port", "1", "--db", ""}), Catch::Contains("--db"));
  CHECK_THAT(command_line_error({"--port", "1", "--frobnicate"}), Catch::Contains("frobnicate"));
}

TEST_CASE("server directories: a missing --db is refused unless --create-db") {
  TempDir tmp;
  fs::create_directories(tmp.path / "w");
  fs::create_directories(tmp.path / "d");
  ServerOptions o;
  o.workflows_dir = (tmp.path / "w").string();
  o.defaults_dir = (tmp.path / "d").string();
  o.logs_dir = (tmp.path / "logs").string();
  o.db_dir = (tmp.path / "var/db").string();
  auto refused = prepare_server_directories(o);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains(o.db_dir));
  CHECK_THAT(refused.error().message, Catch::Contains("--create-db"));
  CHECK_FALSE(fs::exists(o.db_dir));

  o.create_db = true;
  REQUIRE(prepare_server_directories(o));
  CHECK(fs::is_directory(o.db_dir));
  CHECK(fs::is_directory(o.logs_dir));
}

TEST_CASE("server directories: missing workflows, defaults, explicit hadoop-conf are named") {
  TempDir tmp;
  ServerOptions o;
  o.workflows_dir = (tmp.path / "nope").string();
  o.defaults_dir = tmp.path.string();
  o.db_dir = tmp.path.string();
  o.logs_dir = tmp.path.string();
  CHECK_THAT(prepare_server_directories(o).error().message, Catch::Contains("workflows"));
  o.workflows_dir = tmp.path.string();
  o.defaults_dir = (tmp.path / "nope").string();
  CHECK_THAT(prepare_server_directories(o).error().message, Catch::Contains("defaults"));
  o.defaults_dir = tmp.path.string();
  o.hadoop_conf_dir = (tmp.path / "nope").string();
  CHECK(prepare_server_directories(o));  // the default may be missing
  o.hadoop_conf_given = true;
  CHECK_THAT(prepare_server_directories(o).error().message, Catch::Contains("Hadoop"));
  o.hadoop_conf_given = false;
  o.logs_dir = (tmp.path / "a/b/logs").string();  // only one level is created
  CHECK_THAT(prepare_server_directories(o).error().message, Catch::Contains("logs"));
}

TEST_CASE("server options: --slurm-bin names an existing directory") {
  auto result = parse({"--port", "1", "--slurm-bin", "/opt/slurm/bin/"});
  REQUIRE(result);
  CHECK(result->options->slurm_bin_dir == "/opt/slurm/bin");
  CHECK_THAT(parse({"--port", "1", "--slurm-bin", ""}).error().message,
             Catch::Contains("--slurm-bin must not be empty"));
  TempDir tmp;
  ServerOptions o;
  o.workflows_dir = o.defaults_dir = o.db_dir = o.logs_dir = tmp.path.string();
  o.slurm_bin_dir = (tmp.path / "nope").string();
  CHECK_THAT(prepare_server_directories(o).error().message,
             Catch::Contains("Slurm commands (--slurm-bin) directory"));
  o.slurm_bin_dir = tmp.path.string();
  CHECK(prepare_server_directories(o));
}

}  // namespace
TEST_CASE("server options: --notify-webhook is repeatable and must be an http(s) URL") {
  auto result = parse(
      {"--port", "1", "--notify-webhook", "http://a/hook", "--notify-webhook", "https://b/hook"});
  REQUIRE(result);
  CHECK(result->options->notify_webhooks ==
        std::vector<std::string>{"http://a/hook", "https://b/hook"});
  CHECK(parse({"--port", "1"})->options->notify_webhooks.empty());
  CHECK_THAT(command_line_error({"--port", "1", "--notify-webhook", "mailto:ops@example.com"}),
             Catch::Contains("--notify-webhook"));
}

}  // namespace celos

namespace celos {
TEST_CASE("server options: --io-concurrency and --io-timeout are checked") {
  auto parse = [](std::vector<const char*> extra) {
    std::vector<const char*> argv{"celos-server", "--port", "0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return parse_server_command_line(static_cast<int>(argv.size()), argv.data(), "v");
  };
  auto defaults = parse({});
  REQUIRE(defaults);
  CHECK(defaults->options->io_concurrency == 32);
  CHECK(defaults->options->io_timeout_seconds == 30);
  auto given = parse({"--io-concurrency", "1", "--io-timeout", "2.5"});
  REQUIRE(given);
  CHECK(given->options->io_concurrency == 1);
  CHECK(given->options->io_timeout_seconds == 2.5);
  for (const char* bad : {"0", "1025", "abc", "4x", ""}) {
    auto r = parse({"--io-concurrency", bad});
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("--io-concurrency") != std::string::npos);
  }
  for (const char* bad : {"0", "-1", "soon", "nan"}) {
    auto r = parse({"--io-timeout", bad});
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("--io-timeout") != std::string::npos);
  }
}
namespace {

TEST_CASE("server options: state database and cluster flags") {
  auto defaults = parse({"--port", "0", "--db", "/var/db"});
  REQUIRE(defaults);
  CHECK(defaults->options->state_db_uri() == "file:/var/db");
  CHECK_FALSE(defaults->options->uses_postgres());
  CHECK(defaults->options->lease_seconds == 10);
  CHECK(defaults->options->cluster_name == "celos");
  auto pg = parse({"--port", "0", "--state-db", "postgresql://h/celos", "--node-id", "n1",
                   "--advertise-url", "http://n1:8080", "--lease-seconds", "5", "--cluster-name",
                   "prod"});
  REQUIRE(pg);
  CHECK(pg->options->uses_postgres());
  CHECK(pg->options->state_db_uri() == "postgresql://h/celos");
  CHECK(pg->options->node_id == "n1");
  CHECK(pg->options->advertise_url == "http://n1:8080");
  CHECK(pg->options->lease_seconds == 5);
  CHECK(pg->options->cluster_name == "prod");
}

TEST_CASE("server options: --import-db needs no --port but a PostgreSQL --state-db") {
  auto import = parse({"--import-db", "/var/db", "--state-db", "postgresql://h/celos", "--force"});
  REQUIRE(import);
  CHECK(import->options->import_db_dir == "/var/db");
  CHECK(import->options->force);
  CHECK(command_line_error({"--import-db", "/var/db"}).find("--state-db") != std::string::npos);
  CHECK(command_line_error({"--port", "0", "--force"}).find("--force") != std::string::npos);
  CHECK(command_line_error({"--port", "0", "--lease-seconds", "1"}).find("--lease-seconds") !=
        std::string::npos);
  CHECK(command_line_error({"--port", "0", "--advertise-url", "n1:80"}).find("--advertise-url") !=
        std::string::npos);
}

}  // namespace
}  // namespace celos

namespace celos {
TEST_CASE("server options: --jobs-dir places the job directories, by default under --db") {
  std::vector<const char*> plain{"celos-server", "--port", "0", "--db", "/var/db"};
  auto defaults = parse_server_command_line(static_cast<int>(plain.size()), plain.data(), "v");
  REQUIRE(defaults);
  CHECK(defaults->options->jobs_directory() == "/var/db/jobs");
  std::vector<const char*> shared{"celos-server", "--port", "0", "--jobs-dir", "/shared/jobs/"};
  auto given = parse_server_command_line(static_cast<int>(shared.size()), shared.data(), "v");
  REQUIRE(given);
  CHECK(given->options->jobs_directory() == "/shared/jobs");
}
}  // namespace celos

namespace celos {
TEST_CASE("server options: --allow-loopback-webhooks and --audit-keep-days") {
  auto defaults = parse({"--port", "1"});
  REQUIRE(defaults);
  CHECK_FALSE(defaults->options->allow_loopback_webhooks);
  CHECK(defaults->options->audit_keep_days == 90);
  auto set = parse({"--port", "1", "--allow-loopback-webhooks", "--audit-keep-days", "7"});
  REQUIRE(set);
  CHECK(set->options->allow_loopback_webhooks);
  CHECK(set->options->audit_keep_days == 7);
  auto result = parse({"--port", "1", "--audit-keep-days", "0"});
  REQUIRE_FALSE(result);
  CHECK_THAT(result.error().message, Catch::Contains("--audit-keep-days"));
}

TEST_CASE("server options: --history-retention-days is 30 by default, 0 keeps forever") {
  auto parse_with = [](std::vector<const char*> extra) {
    std::vector<const char*> argv{"celos-server", "--port", "0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return parse_server_command_line(static_cast<int>(argv.size()), argv.data(), "v");
  };
  auto defaults = parse_with({});
  REQUIRE(defaults);
  CHECK(defaults->options->history_retention_days == 30);
  CHECK(parse_with({"--history-retention-days", "0"})->options->history_retention_days == 0);
  CHECK(parse_with({"--history-retention-days", "400"})->options->history_retention_days == 400);
  for (const char* bad : {"-1", "1.5", "month", "", "36501"}) {
    auto r = parse_with({"--history-retention-days", bad});
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("--history-retention-days") != std::string::npos);
  }
}

TEST_CASE("server options: OpenLineage to a collector or a file, a malformed URL names the flag") {
  auto off = parse({"--port", "1"});
  REQUIRE(off);
  CHECK_FALSE(off->options->lineage_enabled());
  auto on =
      parse({"--port", "1", "--openlineage-url", "http://marquez:5000/api/v1/lineage",
             "--openlineage-token-file", "/etc/celos/ol-token", "--openlineage-namespace", "etl"});
  REQUIRE(on);
  CHECK(on->options->lineage_enabled());
  CHECK(on->options->openlineage_url == "http://marquez:5000/api/v1/lineage");
  CHECK(on->options->openlineage_token_file == "/etc/celos/ol-token");
  CHECK(on->options->openlineage_namespace == "etl");
  auto file = parse({"--port", "1", "--openlineage-file", "/var/log/celos/lineage.jsonl"});
  REQUIRE(file);
  CHECK(file->options->openlineage_file == "/var/log/celos/lineage.jsonl");
  CHECK_THAT(
      command_line_error({"--port", "1", "--openlineage-url", "marquez:5000/api/v1/lineage"}),
      Catch::Contains("--openlineage-url") && Catch::Contains("http://"));
  CHECK_THAT(command_line_error({"--port", "1", "--openlineage-url", "http://"}),
             Catch::Contains("--openlineage-url") && Catch::Contains("no host"));
  CHECK_THAT(command_line_error({"--port", "1", "--openlineage-token-file", "/t"}),
             Catch::Contains("--openlineage-token-file needs --openlineage-url"));
  CHECK_THAT(command_line_error(
                 {"--port", "1", "--openlineage-url", "http://m/l", "--openlineage-file", "/x"}),
             Catch::Contains("exclude each other"));
  CHECK_THAT(command_line_error({"--port", "1", "--openlineage-namespace", ""}),
             Catch::Contains("--openlineage-namespace"));
}

}  // namespace celos
