// celos-server's command line (SPEC §8). See celos/server_options.h.
#include <filesystem>
#include <sstream>
#include <system_error>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "celos/host_check.h"
#include "celos/lineage.h"
#include "celos/server_options.h"

namespace celos {
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

constexpr const char* kServerUsage =
    "Usage: celos-server --port N [--host ADDR] [--workflows DIR] [--defaults DIR] [--logs DIR]\n"
    "                    [--db DIR] [--create-db] [--autoSchedule SECONDS] [--hadoop-conf DIR]\n"
    "                    [--oozie-notifications=true|false]\n"
    "                    [--slurm-bin DIR] [--io-concurrency N] [--io-timeout SECONDS]\n"
    "                    [--state-db URI] [--node-id ID]\n"
    "                    [--advertise-url URL] [--lease-seconds N] [--cluster-name NAME]\n"
    "                    [--allowed-hosts H,...] [--auth-tokens FILE [--auth-reads]]\n"
    "                    [--notify-webhook URL]... [--allow-loopback-webhooks]\n"
    "                    [--audit-keep-days N] [--history-retention-days N]\n"
    "                    [--max-backfill-slots N] [--data-check-backoff SECONDS]\n"
    "                    [--openlineage-url URL [--openlineage-token-file FILE]]\n"
    "                    [--openlineage-file PATH] [--openlineage-namespace NS]\n"
    "       celos-server --import-db DIR --state-db URI [--force]\n";

// Where celos-server listens, what it reads and writes, how it steps and calls out.
void add_core_options(po::options_description& options, const ServerOptions& d) {
  options.add_options()("help", "print this help and exit")(
      "version", "print the version and exit")("port", po::value<int>(),
                                               "HTTP port (required; 0 = any free port)")(
      "host", po::value<std::string>()->default_value(d.host), "address to listen on")(
      "workflows", po::value<std::string>()->default_value(d.workflows_dir), "workflows directory")(
      "defaults", po::value<std::string>()->default_value(d.defaults_dir), "defaults directory")(
      "logs", po::value<std::string>()->default_value(d.logs_dir),
      "logs directory (created if missing)")(
      "db", po::value<std::string>()->default_value(d.db_dir),
      "state database directory (must exist unless --create-db)")(
      "create-db", "create a missing --db directory (first installs)")(
      "jobs-dir", po::value<std::string>(),
      "directory of the command and Slurm job directories (default <db>/jobs; in a cluster, "
      "storage every node mounts)")("autoSchedule", po::value<int>(),
                                    "seconds between automatic scheduler steps")(
      "oozie-notifications", po::value<std::string>(),
      "true (default) or false: with --autoSchedule, submitted Oozie jobs call celos back when "
      "they end (oozie.wf.workflow.notification.url)")(
      "io-concurrency", po::value<std::string>(),
      "external calls of a step in flight at once, 1-1024 (default 32; 1 = one at a time)")(
      "io-timeout", po::value<std::string>(), "seconds each external call may take (default 30)")(
      "hadoop-conf", po::value<std::string>()->default_value(d.hadoop_conf_dir),
      "Hadoop configuration directory (core-site.xml, hdfs-site.xml)");
}

// Who may call it, whom it calls back, what it keeps.
void add_access_options(po::options_description& options, const ServerOptions& d) {
  options.add_options()("allowed-hosts", po::value<std::string>(),
                        "host names clients may use (Host header), comma-separated; * = any "
                        "(default: localhost, 127.0.0.1, ::1, --host, this machine's name)")(
      "auth-tokens", po::value<std::string>(), "JSON file of bearer tokens with roles")(
      "auth-reads", "reads need a viewer token too (needs --auth-tokens)")(
      "notify-webhook", po::value<std::vector<std::string>>()->composing(),
      "POST FAILURE and WAIT_TIMEOUT of every workflow to this http(s) URL (repeatable)")(
      "allow-loopback-webhooks",
      "let webhooks call loopback addresses and this server (refused by default)")(
      "audit-keep-days", po::value<int>()->default_value(d.audit_keep_days),
      "days of audit trail kept (rolled audit.log files, rows of the PostgreSQL table), 1-36500")(
      "slurm-bin", po::value<std::string>(),
      "directory of the Slurm commands (sbatch, squeue, scontrol, scancel, sacct); "
      "default: found in PATH");
}

// The state database, the cluster, retention, data checks, backfills.
void add_cluster_options(po::options_description& options, const ServerOptions& d) {
  options.add_options()(
      "state-db", po::value<std::string>(),
      "state database: file:DIR (default: file:<db>) or postgresql://… (then --db only places "
      "the jobs directory)")("import-db", po::value<std::string>(),
                             "copy the file database DIR into --state-db (PostgreSQL) and exit")(
      "force", "with --import-db: empty a non-empty target first")(
      "node-id", po::value<std::string>(), "cluster node id (default <hostname>:<port>)")(
      "advertise-url", po::value<std::string>(),
      "URL other nodes reach this one at (default http://<host>:<port>)")(
      "lease-seconds", po::value<int>()->default_value(d.lease_seconds),
      "cluster leader lease duration")(
      "cluster-name", po::value<std::string>()->default_value(d.cluster_name),
      "cluster name (nodes with one --state-db and name form a cluster)")(
      "history-retention-days", po::value<std::string>(),
      "days of slot history kept (default 30; 0 = forever); the leader prunes once an hour")(
      "data-check-backoff", po::value<std::string>(),
      "one step of the back-off of data checks on WebHDFS and SFTP: a slot whose data is "
      "missing is checked after 1, 2, 4, ... such steps, at most 10 minutes apart, and at once "
      "after an event (0 = off; default: the --autoSchedule period, off without it)")(
      "max-backfill-slots", po::value<std::string>(),
      "the most slots one backfill plan may cover (default 1000000)");
}

// OpenLineage (docs/openlineage.md).
void add_lineage_options(po::options_description& options) {
  options.add_options()(
      "openlineage-url", po::value<std::string>(),
      "send OpenLineage run events to this collector (Marquez: http://host:5000/api/v1/lineage)")(
      "openlineage-token-file", po::value<std::string>(),
      "a file holding the collector's bearer token")(
      "openlineage-file", po::value<std::string>(),
      "write OpenLineage run events to this file as JSON lines instead")(
      "openlineage-namespace", po::value<std::string>(),
      "the namespace of celos's OpenLineage jobs (default: --cluster-name)");
}

po::options_description describe_server_options() {
  const ServerOptions d;
  po::options_description options("celos-server options");
  add_core_options(options, d);
  add_access_options(options, d);
  add_cluster_options(options, d);
  add_lineage_options(options);
  return options;
}

Result<std::string> directory_option(const po::variables_map& vm, const char* name) {
  const auto& value = vm[name].as<std::string>();
  if (value.empty()) return fail(fmt::format("--{} must not be empty", name), ErrorCode::kInvalid);
  return absolute_directory(value);
}

// Read as text so that "abc", "1.5" and "" get our message rather than program_options'.
Result<void> read_io_options(const po::variables_map& vm, ServerOptions& options) {
  if (vm.count("io-concurrency")) {
    const std::string& text = vm["io-concurrency"].as<std::string>();
    std::size_t used = 0;
    int value = 0;
    try {
      value = std::stoi(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() || value < 1 || value > 1024) {
      return fail(
          fmt::format("--io-concurrency must be a whole number from 1 to 1024, not \"{}\"", text),
          ErrorCode::kInvalid);
    }
    options.io_concurrency = value;
  }
  if (vm.count("io-timeout")) {
    const std::string& text = vm["io-timeout"].as<std::string>();
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() || !(value > 0) || value > 86400) {
      return fail(
          fmt::format("--io-timeout must be a positive number of seconds, not \"{}\"", text),
          ErrorCode::kInvalid);
    }
    options.io_timeout_seconds = value;
  }
  return {};
}

// Read as text, as the io options.
Result<void> read_history_retention(const po::variables_map& vm, ServerOptions& options) {
  if (!vm.count("history-retention-days")) return {};
  const std::string& text = vm["history-retention-days"].as<std::string>();
  std::size_t used = 0;
  int value = -1;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < 0 || value > 36500) {
    return fail(fmt::format("--history-retention-days must be a whole number of days from 0 "
                            "(keep forever) to 36500, not \"{}\"",
                            text),
                ErrorCode::kInvalid);
  }
  options.history_retention_days = value;
  return {};
}

// Read as text, as the io options: 1 to a billion slots.
Result<void> read_data_check_backoff(const po::variables_map& vm, ServerOptions& options) {
  if (!vm.count("data-check-backoff")) return {};
  const std::string& text = vm["data-check-backoff"].as<std::string>();
  if (text.empty() || text.size() > 6 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return fail(fmt::format("--data-check-backoff must be a whole number of seconds (0 = off), "
                            "not \"{}\"",
                            text),
                ErrorCode::kInvalid);
  }
  options.data_check_backoff_seconds = std::stoi(text);
  return {};
}

Result<void> read_backfill_limit(const po::variables_map& vm, ServerOptions& options) {
  if (!vm.count("max-backfill-slots")) return {};
  const std::string& text = vm["max-backfill-slots"].as<std::string>();
  const bool digits = !text.empty() && text.size() <= 10 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  const long long value = digits ? std::stoll(text) : 0;
  if (value < 1 || value > 1'000'000'000) {
    return fail(fmt::format("--max-backfill-slots must be a whole number from 1 to 1000000000, "
                            "not \"{}\"",
                            text),
                ErrorCode::kInvalid);
  }
  options.max_backfill_slots = static_cast<std::size_t>(value);
  return {};
}

Result<void> read_cluster(const po::variables_map& vm, ServerOptions& options) {
  if (vm.count("state-db")) {
    options.state_db = vm["state-db"].as<std::string>();
    if (options.state_db.empty()) return fail("--state-db must not be empty", ErrorCode::kInvalid);
  }
  if (vm.count("import-db")) {
    auto dir = directory_option(vm, "import-db");
    if (!dir) return tl::unexpected(dir.error());
    options.import_db_dir = *dir;
    if (!options.uses_postgres()) {
      return fail("--import-db needs --state-db postgresql://…", ErrorCode::kInvalid);
    }
  }
  options.force = vm.count("force") > 0;
  if (options.force && options.import_db_dir.empty()) {
    return fail("--force only goes with --import-db", ErrorCode::kInvalid);
  }
  if (vm.count("node-id")) options.node_id = vm["node-id"].as<std::string>();
  if (vm.count("advertise-url")) options.advertise_url = vm["advertise-url"].as<std::string>();
  if (vm.count("advertise-url") && options.advertise_url.rfind("http", 0) != 0) {
    return fail("--advertise-url must be an http:// or https:// URL", ErrorCode::kInvalid);
  }
  options.lease_seconds = vm["lease-seconds"].as<int>();
  if (options.lease_seconds < 2 || options.lease_seconds > 3600) {
    return fail("--lease-seconds must be between 2 and 3600", ErrorCode::kInvalid);
  }
  options.cluster_name = vm["cluster-name"].as<std::string>();
  if (options.cluster_name.empty())
    return fail("--cluster-name must not be empty", ErrorCode::kInvalid);
  return {};
}

Result<void> read_numbers(const po::variables_map& vm, ServerOptions& options) {
  if (!vm.count("port")) {
    if (vm.count("import-db")) return {};  // an import serves nothing
    return fail("--port is required", ErrorCode::kInvalid);
  }
  options.port = vm["port"].as<int>();
  if (options.port < 0 || options.port > 65535) {
    return fail("--port must be between 0 and 65535", ErrorCode::kInvalid);
  }
  if (vm.count("autoSchedule")) {
    options.auto_schedule_seconds = vm["autoSchedule"].as<int>();
    if (options.auto_schedule_seconds <= 0) {
      return fail("--autoSchedule must be a positive number of seconds", ErrorCode::kInvalid);
    }
  }
  if (vm.count("oozie-notifications")) {
    const std::string& text = vm["oozie-notifications"].as<std::string>();
    if (text != "true" && text != "false") {
      return fail(fmt::format("--oozie-notifications must be true or false, not \"{}\"", text),
                  ErrorCode::kInvalid);
    }
    options.oozie_notifications = text == "true";
  }
  if (auto ok = read_io_options(vm, options); !ok) return ok;
  if (auto ok = read_history_retention(vm, options); !ok) return ok;
  if (auto ok = read_data_check_backoff(vm, options); !ok) return ok;
  return read_backfill_limit(vm, options);
}

Result<void> read_directories(const po::variables_map& vm, ServerOptions& options) {
  const std::pair<const char*, std::string*> dirs[] = {{"workflows", &options.workflows_dir},
                                                       {"defaults", &options.defaults_dir},
                                                       {"logs", &options.logs_dir},
                                                       {"db", &options.db_dir},
                                                       {"hadoop-conf", &options.hadoop_conf_dir}};
  for (const auto& [name, target] : dirs) {
    auto dir = directory_option(vm, name);
    if (!dir) return tl::unexpected(dir.error());
    *target = std::move(*dir);
  }
  options.hadoop_conf_given = !vm["hadoop-conf"].defaulted();
  if (vm.count("jobs-dir")) {
    auto dir = directory_option(vm, "jobs-dir");
    if (!dir) return tl::unexpected(dir.error());
    options.jobs_dir = std::move(*dir);
  }
  if (vm.count("slurm-bin")) {
    auto dir = directory_option(vm, "slurm-bin");
    if (!dir) return tl::unexpected(dir.error());
    options.slurm_bin_dir = std::move(*dir);
  }
  return {};
}

Result<void> read_api_options(const po::variables_map& vm, ServerOptions& options) {
  if (vm.count("allowed-hosts")) {
    options.allowed_hosts = vm["allowed-hosts"].as<std::string>();
    if (auto ok = parse_allowed_hosts(options.allowed_hosts); !ok)
      return tl::unexpected(ok.error());
  }
  if (vm.count("auth-tokens")) {
    const auto& file = vm["auth-tokens"].as<std::string>();
    if (file.empty()) return fail("--auth-tokens must not be empty", ErrorCode::kInvalid);
    options.auth_tokens = absolute_directory(file);
  }
  options.auth_reads = vm.count("auth-reads") > 0;
  options.allow_loopback_webhooks = vm.count("allow-loopback-webhooks") > 0;
  options.audit_keep_days = vm["audit-keep-days"].as<int>();
  if (options.audit_keep_days < 1 || options.audit_keep_days > 36500) {
    return fail("--audit-keep-days must be between 1 and 36500", ErrorCode::kInvalid);
  }
  if (options.auth_reads && options.auth_tokens.empty()) {
    return fail("--auth-reads needs --auth-tokens", ErrorCode::kInvalid);
  }
  return {};
}

// OpenLineage (issue 32): a malformed URL is a start-up error naming the flag.
Result<void> read_lineage_options(const po::variables_map& vm, ServerOptions& options) {
  auto text = [&](const char* name) {
    return vm.count(name) ? vm[name].as<std::string>() : std::string();
  };
  options.openlineage_url = text("openlineage-url");
  if (vm.count("openlineage-url")) {
    if (auto ok = check_lineage_url(options.openlineage_url); !ok) {
      return fail("--openlineage-url: " + ok.error().message, ErrorCode::kInvalid);
    }
  }
  if (vm.count("openlineage-file")) {
    if (text("openlineage-file").empty()) {
      return fail("--openlineage-file must not be empty", ErrorCode::kInvalid);
    }
    if (vm.count("openlineage-url")) {
      return fail("--openlineage-file and --openlineage-url exclude each other",
                  ErrorCode::kInvalid);
    }
    options.openlineage_file = absolute_directory(text("openlineage-file"));
  }
  if (vm.count("openlineage-token-file")) {
    if (!vm.count("openlineage-url") || text("openlineage-token-file").empty()) {
      return fail("--openlineage-token-file needs --openlineage-url and a file name",
                  ErrorCode::kInvalid);
    }
    options.openlineage_token_file = absolute_directory(text("openlineage-token-file"));
  }
  options.openlineage_namespace = text("openlineage-namespace");
  if (vm.count("openlineage-namespace") && options.openlineage_namespace.empty()) {
    return fail("--openlineage-namespace must not be empty", ErrorCode::kInvalid);
  }
  return {};
}

Result<ServerOptions> server_options_from(const po::variables_map& vm) {
  ServerOptions options;
  if (auto ok = read_numbers(vm, options); !ok) return tl::unexpected(ok.error());
  options.host = vm["host"].as<std::string>();
  if (options.host.empty()) return fail("--host must not be empty", ErrorCode::kInvalid);
  if (auto ok = read_directories(vm, options); !ok) return tl::unexpected(ok.error());
  options.create_db = vm.count("create-db") > 0;
  if (vm.count("notify-webhook")) {
    for (const std::string& url : vm["notify-webhook"].as<std::vector<std::string>>()) {
      if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
        return fail(
            fmt::format("--notify-webhook must be an http:// or https:// URL, not \"{}\"", url),
            ErrorCode::kInvalid);
      }
      options.notify_webhooks.push_back(url);
    }
  }
  if (auto ok = read_cluster(vm, options); !ok) return tl::unexpected(ok.error());
  if (auto ok = read_api_options(vm, options); !ok) return tl::unexpected(ok.error());
  if (auto ok = read_lineage_options(vm, options); !ok) return tl::unexpected(ok.error());
  return options;
}

Result<void> require_dir(const std::string& what, const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return {};
  return fail(fmt::format("{} directory {} does not exist", what, path), ErrorCode::kInvalid);
}

// Created when missing, but only one level deep unless `parents`: a missing parent is more
// likely a typo than a wish.
Result<void> ensure_dir(const std::string& what, const std::string& path, bool parents) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return {};
  if (parents) {
    fs::create_directories(path, ec);
  } else {
    fs::create_directory(path, ec);
  }
  if (ec) {
    return fail(fmt::format("cannot create {} directory {}: {}", what, path, ec.message()),
                ErrorCode::kInvalid);
  }
  return {};
}

}  // namespace

std::string absolute_directory(const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  if (ec) return path;
  std::string text = absolute.lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

Result<ServerCommandLine> parse_server_command_line(int argc, const char* const* argv,
                                                    const std::string& version) {
  const po::options_description description = describe_server_options();
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(description).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return fail(std::string(e.what()) + " (see --help)", ErrorCode::kInvalid);
  }
  ServerCommandLine result;
  if (vm.count("help")) {
    std::ostringstream help;
    help << kServerUsage << "\n" << description;
    result.print = help.str();
    return result;
  }
  if (vm.count("version")) {
    result.print = "celos-server " + version + "\n";
    return result;
  }
  auto options = server_options_from(vm);
  if (!options) return tl::unexpected(options.error());
  result.options = std::move(*options);
  return result;
}

Result<void> prepare_server_directories(const ServerOptions& options) {
  if (auto ok = require_dir("workflows", options.workflows_dir); !ok) return ok;
  if (auto ok = require_dir("defaults", options.defaults_dir); !ok) return ok;
  if (options.hadoop_conf_given) {
    if (auto ok = require_dir("Hadoop configuration", options.hadoop_conf_dir); !ok) return ok;
  }
  if (!options.slurm_bin_dir.empty()) {
    if (auto ok = require_dir("Slurm commands (--slurm-bin)", options.slurm_bin_dir); !ok)
      return ok;
  }
  if (options.create_db) {
    if (auto ok = ensure_dir("db", options.db_dir, true); !ok) return ok;
  } else if (auto ok = require_dir("db", options.db_dir); !ok) {
    return fail(fmt::format("db directory {} does not exist (check --db; --create-db creates it "
                            "on a first install)",
                            options.db_dir),
                ErrorCode::kInvalid);
  }
  if (!options.jobs_dir.empty()) {
    if (auto ok = ensure_dir("jobs (--jobs-dir)", options.jobs_dir, false); !ok) return ok;
  }
  return ensure_dir("logs", options.logs_dir, false);
}

}  // namespace celos
