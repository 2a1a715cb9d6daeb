// The parts of celos-server (server_parts.h), each built from the options and the parts before.
#include "server/server_parts.h"

#include <cstdlib>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "celos/api_serving.h"
#include "celos/clock.h"
#include "celos/hadoop.h"
#include "celos/host_check.h"
#include "celos/slot_history.h"
#include "celos/state_db_open.h"
#include "celos/workflow_loader.h"
#include "celos/write_fence.h"
#include "server/server_cluster.h"

namespace celos {
namespace {

// Event-driven steps wait for 10 ms without events (a burst of announcements is answered
// before its consumers are stepped together), half a second at most (docs/operations.md).
constexpr std::chrono::milliseconds kEventSettle{10};
constexpr std::chrono::milliseconds kEventMaxDelay{500};

Result<HadoopConfig> read_hadoop_config(const ServerOptions& opts) {
  if (!std::filesystem::is_directory(opts.hadoop_conf_dir)) return HadoopConfig{};
  auto config = read_hadoop_config_dir(opts.hadoop_conf_dir);
  if (!config) return fail(config.error().message, ErrorCode::kInvalid);
  return config;
}

// A file database locks its directory (a second server on it exits 1, naming it and the
// holder's pid); PostgreSQL migrates its schema and, when unreachable, is retried on use.
Result<std::unique_ptr<StateDatabase>> open_database(const ServerOptions& opts,
                                                     std::shared_ptr<WriteFence> fence) {
  StateDatabaseOptions db_options;
  db_options.connect_later = true;
  if (opts.uses_postgres()) {
    db_options.fence = std::move(fence);  // only the leader writes (SPEC §11)
    // No session may hold locks long after its node stopped answering (issue 33).
    db_options.session_lease = std::chrono::seconds(opts.lease_seconds);
  }
  return open_state_database(opts.state_db_uri(), db_options);
}

NotifierOptions notifier_options(const ServerOptions& opts, Scheduling& s) {
  // Notifications: their own HTTP client, 10 s per POST (SPEC §16), their own thread.
  return {.http = make_curl_http_client({.connect_timeout = std::chrono::seconds(5),
                                         .total_timeout = std::chrono::seconds(10)}),
          .default_webhooks = opts.notify_webhooks,
          .node = machine_name("unknown"),
          .capacity = 10000,
          .first_retry = std::chrono::seconds(5),
          .max_retry = std::chrono::minutes(2),
          .give_up_after = std::chrono::minutes(15),
          .clock = {},
          .on_drop = [&s] { s.metrics.count_notification_dropped(); },
          .refuse =
              [&s](const std::string& url) {
                WebhookGuardOptions guard = s.webhook_guard;
                guard.own_port = s.own_port.load();
                return webhook_refusal(url, guard);
              },
          .on_refused = [&s] { s.metrics.count_webhook_refused(); }};
}

// The audit trail (SPEC §13): <logs>/audit.log, and with PostgreSQL the table every node
// writes (and GET /api/v1/audit reads); refusals rate-limited per client.
std::unique_ptr<AuditSink> make_audit(const ServerOptions& opts, Metrics& metrics) {
  std::unique_ptr<AuditSink> store = make_file_audit_sink(opts.logs_dir, opts.audit_keep_days);
  if (opts.uses_postgres()) {
    store = make_tee_audit_sink(std::move(store),
                                make_postgres_audit_sink(opts.state_db, opts.audit_keep_days));
  }
  return make_rate_limited_audit_sink(
      std::move(store),
      {.on_suppressed = [&metrics](std::uint64_t n) { metrics.count_audit_suppressed(n); }});
}

ApiOptions api_options(const ServerOptions& opts, Backends& b, Scheduling& s, Front& f,
                       TokenStore* tokens) {
  auto hosts = opts.allowed_hosts.empty() ? default_host_policy(opts.host, "")
                                          : *parse_allowed_hosts(opts.allowed_hosts);
  Cluster& cluster = *f.cluster;
  return {.hosts = hosts,
          .auth = {tokens, opts.auth_reads},
          .audit = f.audit.get(),
          .metrics = &s.metrics,
          .db = b.db.get(),
          .db_watch = &f.db_watch,
          .startup = &f.startup,
          .cluster_role =
              [&cluster] { return std::string(cluster.is_leader() ? "leader" : "standby"); },
          .node = cluster.node_id(),
          .jobs_dir = opts.jobs_directory(),  // /api/v1/slot-log
          .may_step = [&cluster] { return cluster.is_leader(); },
          .clock_skew = [&cluster] { return cluster.clock_skew(); },
          // Set before serving when --autoSchedule steps by itself (issue 28).
          .on_event =
              [&f](EventSource source, const std::vector<std::string>& workflows) {
                if (f.events) f.events->post(source, workflows);
              },
          .running_jobs = f.running_jobs.get(),
          .max_backfill_slots = opts.max_backfill_slots};
}

// Issue 28: Oozie calls this when a job changes state (events need --autoSchedule).
std::string oozie_notification_url(const ServerOptions& opts) {
  if (opts.auto_schedule_seconds <= 0 || !opts.oozie_notifications) return "";
  return choose_cluster(opts, machine_name("localhost")).options.url +
         "/api/v1/oozie-notification?jobId=$jobId&status=$status";
}

}  // namespace

Result<Backends> open_backends(const ServerOptions& opts) {
  const char* user_env = std::getenv("HADOOP_USER_NAME");
  const std::string user = user_env ? user_env : "";
  auto hadoop_config = read_hadoop_config(opts);
  if (!hadoop_config) return tl::unexpected(hadoop_config.error());
  Backends b;
  // --io-timeout bounds every external call: Oozie, WebHDFS, Slurm commands, API kills.
  b.io_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(opts.io_timeout_seconds * 1000));
  HttpClientOptions http_options;
  http_options.total_timeout = b.io_timeout;
  http_options.connect_timeout = std::min(http_options.connect_timeout, b.io_timeout);
  auto http = make_curl_http_client(http_options);
  b.fence = std::make_shared<WriteFence>();
  auto db = open_database(opts, b.fence);
  if (!db) return tl::unexpected(db.error());
  b.db = std::move(*db);
  b.file_systems = make_hadoop_file_system_resolver(*hadoop_config, http, user);
  b.source = make_js_workflow_source({.workflows_dir = opts.workflows_dir,
                                      .defaults_dir = opts.defaults_dir,
                                      .db_dir = opts.db_dir,
                                      .http = http,
                                      .oozie_user = user,
                                      .oozie_notification_url = oozie_notification_url(opts),
                                      .jobs_dir = opts.jobs_dir,
                                      .slurm_bin = opts.slurm_bin_dir,
                                      .io_timeout = b.io_timeout});
  b.default_fs = hadoop_config->get("fs.defaultFS").rfind("file:", 0) == 0 ? "file" : "webhdfs";
  b.default_fs_uri = hadoop_config->get("fs.defaultFS");
  return b;
}

Scheduling::Scheduling(const ServerOptions& opts, Backends& b)
    : measured_source(instrument_workflow_source(*b.source, metrics)),
      measured_file_systems(instrument_file_systems(*b.file_systems, metrics, b.default_fs)),
      file_events(opts.auto_schedule_seconds > 0
                      ? std::make_unique<LocalPathWatch>(*measured_file_systems, b.default_fs)
                      : nullptr),
      scheduler(*measured_source, *b.db, file_events ? *file_events : *measured_file_systems),
      history(make_history_recorder(*b.db)),
      own_port(opts.port),
      webhook_guard{
          .allow_loopback = opts.allow_loopback_webhooks,
          .own_hosts = {opts.host, machine_name("unknown"), url_host(opts.advertise_url)}},
      notifier([this] { return scheduler.config(); }, notifier_options(opts, *this)),
      executor(make_thread_pool_executor(opts.io_concurrency)) {
  scheduler.add_listener(metrics);
  if (auto mode = b.db->maintenance()) metrics.set_maintenance(mode->mode);
  scheduler.add_listener(*history);
  if (opts.allow_loopback_webhooks) {
    spdlog::warn("--allow-loopback-webhooks: workflow webhooks may call this server's own API");
  }
  scheduler.add_listener(notifier);
  scheduler.set_executor(*executor);
  if (const int step = opts.data_check_backoff_step(); step > 0) {  // issue 28
    scheduler.set_data_check_backoff(
        {.step = std::chrono::seconds(step), .max = std::chrono::minutes(10)});
    spdlog::info("data checks on WebHDFS and SFTP back off in steps of {} s, up to 10 minutes",
                 step);
  }
}

Result<std::unique_ptr<TokenStore>> open_tokens(const ServerOptions& opts) {
  if (!opts.auth_tokens.empty()) {
    auto opened = TokenStore::open(opts.auth_tokens);
    if (!opened) return fail(opened.error().message, ErrorCode::kInvalid);
    return std::move(*opened);
  }
  if (!is_loopback(opts.host)) {
    spdlog::warn(
        "listening on {} without --auth-tokens: anyone who reaches this address can "
        "rerun, kill and pause workflows",
        opts.host);
  }
  return nullptr;
}

Serving::Serving(const ServerOptions& opts, std::chrono::milliseconds io)
    : io_timeout(io),
      database(opts.uses_postgres()
                   ? "the state database (" + describe_postgres_uri(opts.state_db) + ")"
                   : "the state database (" + opts.db_dir + ")"),
      forward_client(
          make_curl_http_client({.connect_timeout = std::min(io, std::chrono::milliseconds(1000)),
                                 .total_timeout = io})) {}

ServingOptions Serving::reading() {
  return {.reads = reads.get(),
          .timer = timer.get(),
          .read_timeout = std::max(std::chrono::milliseconds(1000), io_timeout / 3),
          .mutation_wait = std::max(std::chrono::milliseconds(1000), io_timeout / 2),
          .database = database};
}

ForwardingOptions Serving::forwarding(int lease_seconds) {
  return {.pool = forwards.get(),
          .timer = timer.get(),
          .timeout = io_timeout,
          .retry_after_seconds = std::max(1, lease_seconds / 5)};
}

void Serving::stop() {
  forwards.reset();
  reads.reset();
  timer.reset();
}

Front::Front(const ServerOptions& opts, Backends& b, Scheduling& s, TokenStore* tokens)
    : audit(make_audit(opts, s.metrics)),
      cluster(make_server_cluster(opts, b.fence)),
      db_watch(*b.db, std::chrono::seconds(2)),
      running_jobs(opts.auto_schedule_seconds > 0 && opts.oozie_notifications
                       ? std::make_unique<RunningJobs>()
                       : nullptr),
      api(s.scheduler, api_options(opts, b, s, *this, tokens)),
      serving(opts, b.io_timeout) {
  // Outputs removed, done flags written, jobs submitted and started only while the lease holds.
  s.scheduler.set_lease_guard(*cluster);
  register_cluster_routes(api.routes(), *cluster);
  if (opts.auto_schedule_seconds > 0) {
    LocalPathWatch* files = s.file_events.get();
    events = std::make_unique<EventStepper>(
        api, worker,
        EventStepperOptions{
            .config = [&s] { return s.scheduler.config(); },
            .metrics = &s.metrics,
            .is_local =
                [files](std::string_view uri) { return files != nullptr && files->is_local(uri); },
            .settle = kEventSettle,
            .max_delay = kEventMaxDelay});
    s.scheduler.add_listener(*events);
    if (files) files->set_on_event([this] { events->post_file_event(); });
  }
  if (running_jobs) s.scheduler.add_listener(*running_jobs);
}

Background::Background(const ServerOptions& opts, Backends& b, Scheduling& s, Front& f) {
  Cluster& cluster = *f.cluster;
  // Standbys never step, and the step is what reloads changed workflow files: every node
  // picks them up on its own at least every 10 s (SPEC §16), serialized with the mutations.
  if (opts.uses_postgres()) {
    refresher_.emplace(std::chrono::seconds(5), [&cluster, &f, &s] {
      if (!cluster.is_leader()) f.worker.post([&s] { (void)s.scheduler.refresh(); });
    });
  }
  // Slot history retention: the leader prunes once an hour on this task's own thread (a long
  // delete holds neither the lease row nor a step).
  if (opts.history_retention_days > 0) {
    const std::chrono::days retention(opts.history_retention_days);
    pruner_.emplace(std::chrono::hours(1), [&cluster, &b, retention] {
      if (!cluster.is_leader()) return;
      prune_slot_history(*b.db, system_clock().now(), retention);
    });
  }
  if (f.running_jobs) {  // the jobs submitted before this start are known again
    f.worker.post([&s, &f] { f.running_jobs->seed(s.scheduler, system_clock().now()); });
  }
  if (f.events) {
    job_ends_ = std::make_unique<JobEndWatcher>(
        opts.jobs_directory(),
        [&f](EventSource source, const std::vector<std::string>& ids) {
          f.events->post(source, ids);
        },
        [&cluster] { return cluster.is_leader(); });
  }
  if (opts.auto_schedule_seconds > 0) {
    stepper_.emplace(f.api, f.worker, std::chrono::seconds(opts.auto_schedule_seconds));
    spdlog::info("stepping automatically every {} s", opts.auto_schedule_seconds);
  }
}

void Background::stop() {
  job_ends_.reset();
  if (stepper_) stepper_->stop();
  refresher_.reset();
  pruner_.reset();
}

}  // namespace celos
