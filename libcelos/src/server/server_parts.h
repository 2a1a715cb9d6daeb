// The parts celos-server is assembled from (server_run.cc puts them together in this order):
//
//   Backends     what the scheduler reads and writes through: the state database, file systems,
//                the workflow source (Hadoop configuration, HTTP with --io-timeout)
//   Scheduling   the scheduler and its listeners (metrics, slot history, notifications) and the
//                executor of its external calls
//   Front        the API in front of it: audit trail, Host checks, tokens, the cluster it answers
//                for, the worker that runs mutations and steps one at a time (announcements
//                beside it on their own), the serving pools
//   Background   the periodic tasks: the standby's refresh, history pruning, --autoSchedule
//
// Each part refers to the earlier ones: they are built in place and destroyed in reverse.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "celos/api.h"
#include "celos/api_serving.h"
#include "celos/audit.h"
#include "celos/auth.h"
#include "celos/cluster.h"
#include "celos/cluster_api.h"
#include "celos/db_watch.h"
#include "celos/event_stepper.h"
#include "celos/executor.h"
#include "celos/http_client.h"
#include "celos/metrics.h"
#include "celos/notifier.h"
#include "celos/request_pool.h"
#include "celos/running_jobs.h"
#include "celos/scheduler.h"
#include "celos/server_options.h"
#include "celos/state_db.h"
#include "celos/webhook_guard.h"
#include "celos/write_fence.h"
#include "server/file_events.h"
#include "server/job_events.h"

namespace celos {

struct Backends {
  std::chrono::milliseconds io_timeout{};  // --io-timeout: every external call's bound
  std::shared_ptr<WriteFence> fence;       // only the leader writes (SPEC §11)
  std::unique_ptr<StateDatabase> db;
  std::unique_ptr<FileSystemResolver> file_systems;
  std::unique_ptr<WorkflowSource> source;
  std::string default_fs;      // "file" or "webhdfs": fs.defaultFS as the metrics name it
  std::string default_fs_uri;  // fs.defaultFS ("" when not configured): OpenLineage namespaces
};

// kInvalid: a Hadoop configuration or a state database URI that cannot be used (exit 2); other
// errors: the state database could not be opened (exit 1).
[[nodiscard]] Result<Backends> open_backends(const ServerOptions& opts);

struct Scheduling {
  Scheduling(const ServerOptions& opts, Backends& backends);

  Metrics metrics;  // sees external calls through decorators of the source and file systems
  std::unique_ptr<WorkflowSource> measured_source;
  std::unique_ptr<FileSystemResolver> measured_file_systems;
  // With --autoSchedule: local paths found missing are watched (issue 28); null without.
  std::unique_ptr<LocalPathWatch> file_events;
  Scheduler scheduler;
  std::unique_ptr<SchedulerListener> history;
  // Webhooks may not call loopback or this server unless --allow-loopback-webhooks (issue 33);
  // the port is known once the server listens.
  std::atomic<int> own_port;
  WebhookGuardOptions webhook_guard;
  Notifier notifier;
  std::unique_ptr<Executor> executor;  // SPEC §10: at most --io-concurrency calls in flight
};

// --auth-tokens, read once here and again on SIGHUP; null without the flag (warned about when
// listening beyond loopback). kInvalid naming the file.
[[nodiscard]] Result<std::unique_ptr<TokenStore>> open_tokens(const ServerOptions& opts);

// What keeps the HTTP threads free (issue 33): reads and forwards run on pools, with deadlines
// derived from --io-timeout (reads io/3, a mutation's wait for the worker io/2, a forward io;
// at least 1 s each).
struct Serving {
  Serving(const ServerOptions& opts, std::chrono::milliseconds io);

  ServingOptions reading();
  ForwardingOptions forwarding(int lease_seconds);
  // After the server stopped: queued reads are answered 503, running ones finish.
  void stop();

  std::chrono::milliseconds io_timeout;
  std::string database;  // as named in the 503 of a read that timed out
  std::shared_ptr<HttpClient> forward_client;
  std::unique_ptr<DeadlineTimer> timer = std::make_unique<DeadlineTimer>();
  std::unique_ptr<RequestPool> reads = std::make_unique<RequestPool>(8, 256);
  std::unique_ptr<RequestPool> forwards = std::make_unique<RequestPool>(4, 64);
};

struct Front {
  Front(const ServerOptions& opts, Backends& backends, Scheduling& scheduling, TokenStore* tokens);

  std::unique_ptr<AuditSink> audit;
  StartupGate startup;
  std::unique_ptr<Cluster> cluster;
  // /health/ready answers from this background check, never from the database itself.
  DatabaseWatch db_watch;
  // With --autoSchedule and Oozie notifications: the jobs of RUNNING slots (issue 28).
  std::unique_ptr<RunningJobs> running_jobs;
  Api api;
  SerialWorker worker;
  // Dataset announcements run here, beside the steps (Route::group_handler).
  SerialWorker announcements;
  Serving serving;
  // With --autoSchedule: partial steps of the workflows events may have made ready (issue 28).
  std::unique_ptr<EventStepper> events;
};

class Background {
 public:
  Background(const ServerOptions& opts, Backends& backends, Scheduling& scheduling, Front& front);
  // A running step finishes; then the tasks stop.
  void stop();

 private:
  std::optional<PeriodicTask> refresher_;
  std::optional<PeriodicTask> pruner_;
  std::optional<PeriodicStepper> stepper_;
  std::unique_ptr<JobEndWatcher> job_ends_;  // command jobs' ends (issue 28)
};

}  // namespace celos
