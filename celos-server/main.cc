// celos-server: parses the command line (SPEC §8), wires libcelos together and serves the HTTP
// API (SPEC §6) until SIGTERM/SIGINT. Everything with behaviour lives in libcelos.
// GCC 12's -Wnull-dereference fires inside Boost.Asio's headers (see libcelos/src/web).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#if defined(__GNUC__) && !defined(__clang__)
// Asio uses std::atomic_thread_fence, which GCC's -fsanitize=thread warns about (tsan preset).
#pragma GCC diagnostic ignored "-Wtsan"
#endif

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <fmt/format.h>
#include <boost/asio/signal_set.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "celos/api.h"
#include "celos/audit.h"
#include "celos/auth.h"
#include "celos/host_check.h"
#include "celos/metrics.h"
#include "celos/executor.h"
#include "celos/cluster.h"
#include "celos/cluster_api.h"
#include "celos/db_watch.h"
#include "celos/request_pool.h"
#include "celos/hadoop.h"
#include "celos/logging.h"
#include "celos/http_client.h"
#include "celos/http_server.h"
#include "celos/reload.h"
#include "celos/scheduler.h"
#include "celos/notifier.h"
#include "celos/slot_history.h"
#include "celos/server_options.h"
#include "celos/state_db.h"
#include "celos/version.h"
#include "celos/webhook_guard.h"
#include "celos/workflow_loader.h"

namespace fs = std::filesystem;

namespace {

struct StartupError {
  std::string message;
};

// Returns the file sink, for SIGHUP's reopen.
std::shared_ptr<spdlog::sinks::sink> setup_logging(const std::string& logs_dir) {
  auto file = celos::make_daily_log_sink(logs_dir);
  auto console = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("celos", spdlog::sinks_init_list{file, console});
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return file;
}

// SIGHUP (SPEC §16): runs the reload hooks (reopen the log files, ...) and waits for the next
// one; serving and the running step go on.
void on_hangup(boost::asio::signal_set& hangups, celos::ReloadHooks& hooks) {
  hangups.async_wait([&hangups, &hooks](const boost::system::error_code& error, int) {
    if (error) return;  // cancelled at shutdown
    spdlog::info("SIGHUP received: reloading");
    hooks.run();
    on_hangup(hangups, hooks);
  });
}

// This machine's name, for the "node" of notifications.
std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

// Node id and advertised URL (SPEC §16): a wildcard --host advertises the machine's host name.
std::unique_ptr<celos::Cluster> make_cluster(const celos::ServerOptions& opts,
                                             std::shared_ptr<celos::WriteFence> fence) {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  const std::string hostname = name;
  const bool wildcard = opts.host == "0.0.0.0" || opts.host == "::" || opts.host == "[::]";
  celos::ClusterOptions cluster;
  cluster.name = opts.cluster_name;
  cluster.node_id = opts.node_id.empty() ? fmt::format("{}:{}", hostname, opts.port) : opts.node_id;
  cluster.url = !opts.advertise_url.empty()
                    ? opts.advertise_url
                    : fmt::format("http://{}:{}", wildcard ? hostname : opts.host, opts.port);
  while (cluster.url.size() > 1 && cluster.url.back() == '/') cluster.url.pop_back();
  cluster.lease = std::chrono::seconds(opts.lease_seconds);
  if (!opts.uses_postgres()) return celos::make_single_node_cluster(std::move(cluster));
  if (cluster.url.find("://127.") != std::string::npos ||
      cluster.url.find("://localhost") != std::string::npos ||
      cluster.url.find("://[::1]") != std::string::npos) {
    spdlog::warn("advertised URL {} is a loopback address: other cluster nodes on other hosts "
                 "cannot forward to this one (set --advertise-url)", cluster.url);
  }
  spdlog::info("cluster {}: node {} at {}, lease {} s", cluster.name, cluster.node_id,
               cluster.url, opts.lease_seconds);
  return celos::make_postgres_cluster(opts.state_db, std::move(cluster), std::move(fence));
}

// What keeps the HTTP threads free (issue 33): reads and forwards run on pools, with deadlines
// derived from --io-timeout (reads io/3, a mutation's wait for the worker io/2, a forward io).
struct Serving {
  Serving(const celos::ServerOptions& opts, std::chrono::milliseconds io)
      : io_timeout(io),
        database(opts.uses_postgres()
                     ? "the state database (" + celos::describe_postgres_uri(opts.state_db) + ")"
                     : "the state database (" + opts.db_dir + ")"),
        forward_client(celos::make_curl_http_client(
            {.connect_timeout = std::min(io, std::chrono::milliseconds(1000)),
             .total_timeout = io})) {}

  celos::ServingOptions reading() {
    return {.reads = reads.get(), .timer = timer.get(),
            .read_timeout = std::max(std::chrono::milliseconds(1000), io_timeout / 3),
            .mutation_wait = std::max(std::chrono::milliseconds(1000), io_timeout / 2),
            .database = database};
  }
  celos::ForwardingOptions forwarding(int lease_seconds) {
    return {.pool = forwards.get(), .timer = timer.get(), .timeout = io_timeout,
            .retry_after_seconds = std::max(1, lease_seconds / 5)};
  }
  // After the server stopped: queued reads are answered 503, running ones finish.
  void stop() {
    forwards.reset();
    reads.reset();
    timer.reset();
  }

  std::chrono::milliseconds io_timeout;
  std::string database;
  std::shared_ptr<celos::HttpClient> forward_client;
  std::unique_ptr<celos::DeadlineTimer> timer = std::make_unique<celos::DeadlineTimer>();
  std::unique_ptr<celos::RequestPool> reads = std::make_unique<celos::RequestPool>(8, 256);
  std::unique_ptr<celos::RequestPool> forwards = std::make_unique<celos::RequestPool>(4, 64);
};

// --import-db DIR: copy a file database into --state-db and exit (0 done, 1 corrupt or failed,
// 2 refused: a non-empty target without --force, bad credentials).
int import_db(const celos::ServerOptions& opts) {
  const auto now = std::chrono::time_point_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now());
  auto report = celos::import_file_database(opts.import_db_dir, opts.state_db, opts.force, now);
  if (!report) {
    std::cerr << "celos-server: import of " << opts.import_db_dir
              << " failed, nothing written: " << report.error().message << "\n";
    return report.error().code == celos::ErrorCode::kInvalid ? 2 : 1;
  }
  std::cout << "imported " << opts.import_db_dir << " into "
            << celos::describe_postgres_uri(opts.state_db) << ": " << report->slots
            << " slots, " << report->reruns << " rerun markers, " << report->paused
            << " pause flags, " << report->history << " history entries\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
#if defined(__GLIBC__)
  // The step's executor threads would each get a malloc arena of their own (up to 8 per core);
  // a few arenas keep the memory of a first step of 10,000 workflows from fragmenting.
  ::mallopt(M_ARENA_MAX, 4);
#endif
  auto command_line = celos::parse_server_command_line(argc, argv, CELOS_VERSION);
  if (!command_line) throw StartupError{command_line.error().message};
  if (!command_line->options) {
    std::cout << command_line->print;
    return 0;
  }
  const celos::ServerOptions& opts = *command_line->options;
  if (!opts.import_db_dir.empty()) return import_db(opts);
  if (auto ok = celos::prepare_server_directories(opts); !ok) throw StartupError{ok.error().message};
  const std::string& workflows = opts.workflows_dir;
  const std::string& db = opts.db_dir;
  const auto log_file = setup_logging(opts.logs_dir);
  // Before anything slow, so that an early SIGTERM is a clean stop too (and an early SIGHUP
  // does not kill the server: it waits until the loop runs).
  boost::asio::io_context signals_context;
  boost::asio::signal_set signals(signals_context, SIGTERM, SIGINT);
  boost::asio::signal_set hangups(signals_context, SIGHUP);
  celos::ReloadHooks reload_hooks;  // SIGHUP: add what a reload re-reads here
  reload_hooks.add("log files", [&log_file]() -> celos::Result<void> {
    celos::reopen_daily_log_sink(*log_file);
    return {};
  });

  const char* user_env = std::getenv("HADOOP_USER_NAME");
  const std::string user = user_env ? user_env : "";
  celos::Result<celos::HadoopConfig> hadoop_config = celos::HadoopConfig{};
  if (fs::is_directory(opts.hadoop_conf_dir)) {
    hadoop_config = celos::read_hadoop_config_dir(opts.hadoop_conf_dir);
  }
  if (!hadoop_config) throw StartupError{hadoop_config.error().message};
  // --io-timeout bounds every external call: Oozie, WebHDFS, Slurm commands, API kills.
  const auto io_timeout = std::chrono::milliseconds(
      static_cast<std::int64_t>(opts.io_timeout_seconds * 1000));
  celos::HttpClientOptions http_options;
  http_options.total_timeout = io_timeout;
  http_options.connect_timeout = std::min(http_options.connect_timeout, io_timeout);
  auto http = celos::make_curl_http_client(http_options);
  // A file database locks its directory (a second server on it exits 1, naming it and the
  // holder's pid); PostgreSQL migrates its schema and, when unreachable, is retried on use.
  celos::StateDatabaseOptions db_options;
  db_options.connect_later = true;
  auto fence = std::make_shared<celos::WriteFence>();
  if (opts.uses_postgres()) {
    db_options.fence = fence;  // only the leader writes (SPEC §11)
    // No session may hold locks long after its node stopped answering (issue 33).
    db_options.session_lease = std::chrono::seconds(opts.lease_seconds);
  }
  auto opened_db = celos::open_state_database(opts.state_db_uri(), db_options);
  if (!opened_db) {
    if (opened_db.error().code == celos::ErrorCode::kInvalid) {
      throw StartupError{opened_db.error().message};
    }
    throw std::runtime_error(opened_db.error().message);
  }
  auto state_db = std::move(*opened_db);
  auto file_systems = celos::make_hadoop_file_system_resolver(*hadoop_config, http, user);
  auto source = celos::make_js_workflow_source(
      {.workflows_dir = workflows, .defaults_dir = opts.defaults_dir, .db_dir = db, .http = http,
       .oozie_user = user, .jobs_dir = opts.jobs_dir, .slurm_bin = opts.slurm_bin_dir,
       .io_timeout = io_timeout});
  // Metrics see external calls through decorators; the services themselves know nothing of it.
  celos::Metrics metrics;
  auto measured_source = celos::instrument_workflow_source(*source, metrics);
  auto measured_file_systems = celos::instrument_file_systems(
      *file_systems, metrics, hadoop_config->get("fs.defaultFS").rfind("file:", 0) == 0 ? "file" : "webhdfs");
  celos::Scheduler scheduler(*measured_source, *state_db, *measured_file_systems);
  scheduler.add_listener(metrics);
  if (auto mode = state_db->maintenance()) metrics.set_maintenance(mode->mode);
  auto history = celos::make_history_recorder(*state_db);
  scheduler.add_listener(*history);
  // Webhooks may not call loopback or this server unless --allow-loopback-webhooks (issue 33);
  // the port is known once the server listens.
  std::atomic<int> own_port{opts.port};
  celos::WebhookGuardOptions webhook_guard{
      .allow_loopback = opts.allow_loopback_webhooks,
      .own_hosts = {opts.host, host_name(), celos::url_host(opts.advertise_url)}};
  if (opts.allow_loopback_webhooks) {
    spdlog::warn("--allow-loopback-webhooks: workflow webhooks may call this server's own API");
  }
  // Notifications: their own HTTP client, 10 s per POST (SPEC §16), their own thread.
  celos::Notifier notifier([&scheduler] { return scheduler.config(); },
                           {.http = celos::make_curl_http_client(
                                {.connect_timeout = std::chrono::seconds(5),
                                 .total_timeout = std::chrono::seconds(10)}),
                            .default_webhooks = opts.notify_webhooks,
                            .node = host_name(),
                            .capacity = 10000,
                            .first_retry = std::chrono::seconds(5),
                            .max_retry = std::chrono::minutes(2),
                            .give_up_after = std::chrono::minutes(15),
                            .clock = {},
                            .on_drop = [&metrics] { metrics.count_notification_dropped(); },
                            .refuse = [&webhook_guard, &own_port](const std::string& url) {
                              celos::WebhookGuardOptions guard = webhook_guard;
                              guard.own_port = own_port.load();
                              return celos::webhook_refusal(url, guard);
                            },
                            .on_refused = [&metrics] { metrics.count_webhook_refused(); }});
  scheduler.add_listener(notifier);
  // SPEC §10: at most --io-concurrency external calls of a step in flight.
  auto executor = celos::make_thread_pool_executor(opts.io_concurrency);
  scheduler.set_executor(*executor);

  std::unique_ptr<celos::TokenStore> tokens;
  if (!opts.auth_tokens.empty()) {
    auto opened = celos::TokenStore::open(opts.auth_tokens);
    if (!opened) throw StartupError{opened.error().message};
    tokens = std::move(*opened);
  } else if (!celos::is_loopback(opts.host)) {
    spdlog::warn("listening on {} without --auth-tokens: anyone who reaches this address can "
                 "rerun, kill and pause workflows", opts.host);
  }
  // The audit trail (SPEC §13): <logs>/audit.log, and with PostgreSQL the table every node
  // writes (and GET /api/v1/audit reads); refusals rate-limited per client.
  std::unique_ptr<celos::AuditSink> audit_store =
      celos::make_file_audit_sink(opts.logs_dir, opts.audit_keep_days);
  if (opts.uses_postgres()) {
    audit_store = celos::make_tee_audit_sink(
        std::move(audit_store), celos::make_postgres_audit_sink(opts.state_db, opts.audit_keep_days));
  }
  auto audit = celos::make_rate_limited_audit_sink(
      std::move(audit_store),
      {.on_suppressed = [&metrics](std::uint64_t n) { metrics.count_audit_suppressed(n); }});
  auto hosts = opts.allowed_hosts.empty()
                   ? celos::default_host_policy(opts.host, "")
                   : *celos::parse_allowed_hosts(opts.allowed_hosts);
  celos::StartupGate startup;
  auto cluster = make_cluster(opts, fence);
  // /health/ready answers from this background check, never from the database itself.
  celos::DatabaseWatch db_watch(*state_db, std::chrono::seconds(2));
  // Outputs removed, done flags written, jobs submitted and started only while the lease holds.
  scheduler.set_lease_guard(*cluster);
  celos::Api api(scheduler, {.hosts = hosts, .auth = {tokens.get(), opts.auth_reads},
                             .audit = audit.get(), .metrics = &metrics, .db = state_db.get(),
                             .db_watch = &db_watch, .startup = &startup,
                             .cluster_role = [&cluster] {
                               return std::string(cluster->is_leader() ? "leader" : "standby");
                             },
                             .node = cluster->node_id(),
                             .jobs_dir = opts.jobs_directory(),  // /api/v1/slot-log
                             .may_step = [&cluster] { return cluster->is_leader(); },
                             .clock_skew = [&cluster] { return cluster->clock_skew(); }});
  celos::register_cluster_routes(api.routes(), *cluster);
  celos::SerialWorker worker;
  Serving serving(opts, io_timeout);
  celos::HttpServerOptions server_options;
  server_options.host = opts.host;
  server_options.port = static_cast<std::uint16_t>(opts.port);
  auto server = celos::start_async_http_server(
      server_options,
      celos::make_cluster_http_handler(
          celos::make_api_http_handler(api, worker, serving.reading()), api, *cluster,
          serving.forward_client, serving.forwarding(opts.lease_seconds)));
  spdlog::info("listening on {}:{}", opts.host, server->port());
  own_port = server->port();
  // The port is open first: /health/*, /metrics and /version answer while the files load,
  // everything else waits for the load (SPEC §16).
  const auto config = scheduler.reload();
  startup.open();
  spdlog::info("celos-server {}: {} workflows loaded from {} ({} load errors)", CELOS_VERSION,
               config->workflows.size(), workflows, config->errors.size());
  // Standbys never step, and the step is what reloads changed workflow files: every node
  // picks them up on its own at least every 10 s (SPEC §16), serialized with the mutations.
  std::optional<celos::PeriodicTask> refresher;
  if (opts.uses_postgres()) {
    refresher.emplace(std::chrono::seconds(5), [&] {
      if (!cluster->is_leader()) worker.post([&scheduler] { (void)scheduler.refresh(); });
    });
  }
  // Slot history retention: the leader prunes once an hour on this task's own thread (a long
  // delete holds neither the lease row nor a step).
  std::optional<celos::PeriodicTask> pruner;
  if (opts.history_retention_days > 0) {
    pruner.emplace(std::chrono::hours(1), [&] {
      if (!cluster->is_leader()) return;
      celos::prune_slot_history(
          *state_db,
          std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now()),
          std::chrono::days(opts.history_retention_days));
    });
  }
  std::optional<celos::PeriodicStepper> stepper;
  if (opts.auto_schedule_seconds > 0) {
    stepper.emplace(api, worker, std::chrono::seconds(opts.auto_schedule_seconds));
    spdlog::info("stepping automatically every {} s", opts.auto_schedule_seconds);
  }
  // SIGHUP also re-reads the tokens file (SPEC §16); serving and the running step go on.
  if (tokens) reload_hooks.add("tokens file", [&tokens] { return tokens->reload(); });
  on_hangup(hangups, reload_hooks);
  signals.async_wait([&hangups](const boost::system::error_code&, int signal) {
    spdlog::info("signal {} received: finishing the running step and stopping", signal);
    hangups.cancel();
  });
  signals_context.run();

  // A running step finishes; queued mutations are answered 503; then connections close.
  if (stepper) stepper->stop();
  refresher.reset();
  pruner.reset();
  worker.stop();
  server->stop();
  serving.stop();
  cluster.reset();  // a leader hands its lease over at once
  spdlog::info("celos-server stopped");
  return 0;
} catch (const StartupError& e) {
  std::cerr << "celos-server: " << e.message << "\n";
  return 2;
} catch (const std::exception& e) {
  // Once logging is set up, the log has it too (its console sink is stderr).
  if (spdlog::default_logger()->name() == "celos") {
    spdlog::critical("celos-server: {}", e.what());
  } else {
    std::cerr << "celos-server: " << e.what() << "\n";
  }
  return 1;
}
