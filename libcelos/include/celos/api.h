// The JSON HTTP API of celos-server (SPEC §6) as plain objects, testable without sockets:
//
//   Api              HttpServerRequest -> HttpServerResponse over a Scheduler
//   SerialWorker     one thread that runs jobs in order (steps and mutations)
//   make_api_http_handler   reads answered at once, mutations queued on the worker
//   PeriodicStepper  --autoSchedule: a step every N seconds through the worker
//
// Routes are data (celos/route_table.h): the §6 endpoints are served at their legacy paths and
// under /api/v1/; docs/http-api.md has the shapes.
//
// Errors are {"error": "..."}: 400 bad or missing parameter (the message names it) or illegal
// transition, 404 unknown workflow/slot/path, 405 wrong method (with an Allow header), 502 an
// external service or file system failed, 500 corrupt stored data or a bug (exceptions are
// caught per request). All times are UTC (SPEC §2).
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "celos/audit.h"
#include "celos/auth.h"
#include "celos/clock.h"
#include "celos/db_watch.h"
#include "celos/host_check.h"
#include "celos/http_server.h"
#include "celos/metrics.h"
#include "celos/mutex.h"
#include "celos/request_pool.h"
#include "celos/route_table.h"
#include "celos/scheduler.h"
#include "celos/state_db.h"
#include "celos/time.h"
#include "celos/version.h"

namespace celos {

class StartupGate;

struct ApiOptions {
  // The current time; empty = time_source's.
  std::function<Time()> clock = {};
  // Measures steps (monotonic), and is the current time when `clock` is empty. Not owned.
  Clock* time_source = &system_clock();
  std::string version = CELOS_VERSION;
  // Host/Origin check (SPEC §16); nothing = no check (unit tests).
  std::optional<HostPolicy> hosts = {};
  // Bearer tokens (SPEC §13); no token store = no authentication.
  AuthOptions auth = {};
  // Where mutating requests are recorded; null = nowhere. Not owned.
  AuditSink* audit = nullptr;
  // /metrics; null = an empty Metrics of the Api's own. Not owned.
  Metrics* metrics = nullptr;
  // Maintenance mode and the readiness check; null = the maintenance routes answer 500.
  StateDatabase* db = nullptr;
  // /health/ready's view of `db`, checked in the background (issue 33); null = /health/ready
  // asks `db` itself (unit tests). Not owned.
  const DatabaseWatch* db_watch = nullptr;
  // Until the first load of the workflows ends (SPEC §16); null = loaded. Not owned.
  StartupGate* startup = nullptr;
  // "leader", "standby", ... for /health/ready and celos_leader; empty = always "leader".
  std::function<std::string()> cluster_role = {};
  // This server as named in audit records (host:port).
  std::string node = {};
  // Where command and Slurm jobs keep their output (<db>/jobs), for /api/v1/slot-log.
  std::string jobs_dir = {};
  // Cluster (SPEC §11): when set and false, step() does nothing (a standby never steps).
  std::function<bool()> may_step = {};
  // The database's clock minus this node's (Cluster::clock_skew), for /health/ready's "clock"
  // check and celos_clock_skew_seconds; empty or nothing = not measured.
  std::function<std::optional<std::chrono::milliseconds>()> clock_skew = {};
};

class Api {
 public:
  // `scheduler` must outlive the Api. Registers the §6 routes (at their legacy paths and under
  // /api/v1/); other files add theirs through routes() before the server starts.
  explicit Api(Scheduler& scheduler, ApiOptions options = {});

  // The route table: add routes before serving (not thread-safe while adding).
  RouteTable& routes() { return routes_; }
  const RouteTable& routes() const { return routes_; }

  // Answers one request. Thread-safe: reads run concurrently with anything; mutating routes
  // are serialized among themselves (and with step()) by an internal mutex.
  // Never throws: a bug becomes a 500.
  HttpServerResponse handle(const HttpServerRequest& request) const;

  // True for the requests that step or change state (the method of a mutating route): the
  // server runs these on its SerialWorker so that they never hold a connection thread.
  bool is_mutation(const HttpServerRequest& request) const;

  // One step, serialized with the mutations, logged with its duration.
  StepReport step(Time now, const std::optional<std::set<std::string>>& ids = std::nullopt) const;
  // A step for a handler that already holds the mutation lock (a mutating route's handler).
  StepReport step_locked(Time now, const std::optional<std::set<std::string>>& ids) const;

  // The checks of SPEC §16 before a route runs, in their order: Host/Origin (403), route (404),
  // method (405), token (401/403). The refusal (audited when the route mutates), or nothing.
  // A cluster standby runs them itself before it forwards a request to the leader.
  std::optional<HttpServerResponse> refusal(const HttpServerRequest& request) const;

  // Writes the audit record of a mutation this node answered without running it: a standby
  // that forwarded it to the leader (or found no leader) answers the client, so it records the
  // request with the client's address, the token's name and the `status` it answered (SPEC §16).
  // `refused`: a request refused without a route's check (a forged forward), rate-limited as
  // the check's refusals are.
  void audit_answer(const HttpServerRequest& request, int status, bool refused = false) const;

  // True for the requests answered before the first load of the workflows has ended.
  bool answers_while_loading(const HttpServerRequest& request) const;

  Time now() const;
  Scheduler& scheduler() const { return scheduler_; }
  const ApiOptions& options() const { return options_; }
  Metrics& metrics() const { return *metrics_; }
  // "leader" unless the cluster says otherwise.
  std::string cluster_role() const;
  // True once the first load of the workflows has ended.
  bool workflows_loaded() const;

 private:
  struct Checked {
    std::optional<HttpServerResponse> refusal;
    RouteTable::Match match;
    std::string token;  // the token's name, "" for none
  };
  Checked check(const HttpServerRequest& request) const;
  HttpServerResponse dispatch(const HttpServerRequest& request) const;
  HttpServerResponse run_route(const Route& route, const HttpServerRequest& request,
                               const RouteTable::Match& match, const std::string& token) const;
  // `refused`: by check() (Host/Origin, token), before any route ran: rate-limited per client.
  void audit(const HttpServerRequest& request, const std::string& token, int status,
             bool refused = false) const;

  Scheduler& scheduler_;
  ApiOptions options_;
  std::unique_ptr<Metrics> own_metrics_;
  Metrics* metrics_;
  RouteTable routes_;
  // Serializes the mutations and steps; it guards no field of the Api: what they change is the
  // scheduler's and the database's.
  mutable Mutex mutation_mutex_;
};

// The §6 routes (api_handlers.cc), registered by Api's constructor.
void register_core_routes(RouteTable& table, const Api& api);
// The dataset routes of SPEC §14 (datasets_api.cc), registered by Api's constructor.
void register_dataset_routes(RouteTable& table, const Api& api);
// /health/*, /metrics, /api/v1/maintenance and /api/v1/audit (ops_api.cc).
void register_ops_routes(RouteTable& table, const Api& api);
// /api/v1/openapi.json, /api/v1/docs and its assets (openapi.cc).
void register_docs_routes(RouteTable& table, const Api& api);
// The OpenAPI 3 document (JSON text) of every route in `table`.
std::string openapi_json(const RouteTable& table, const std::string& version);

// Holds requests back until the first load of the workflows has ended (SPEC §16): jobs wait
// (at most `max_wait`, then their timeout runs) and run on the thread that calls open().
class StartupGate {
 public:
  explicit StartupGate(std::chrono::milliseconds max_wait = std::chrono::seconds(60),
                       Clock& clock = system_clock());
  ~StartupGate();
  StartupGate(const StartupGate&) = delete;
  StartupGate& operator=(const StartupGate&) = delete;

  bool is_open() const { return open_.load(); }
  // Runs the waiting jobs; later ones run at once. Idempotent.
  void open();
  // Runs `job` now if open, else when opened or (`on_timeout` instead) after max_wait.
  void run_or_wait(std::function<void()> job, std::function<void()> on_timeout);

 private:
  struct Waiting {
    Clock::Monotonic deadline;
    std::function<void()> job;
    std::function<void()> on_timeout;
  };
  void expire_loop() EXCLUDES(mutex_);

  std::chrono::milliseconds max_wait_;
  Clock& clock_;
  std::atomic<bool> open_{false};  // written under mutex_, read without it by is_open()
  Mutex mutex_;
  CondVar wake_;
  std::deque<Waiting> waiting_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread timer_;
};

// Runs jobs one at a time, in the order posted, on its own thread.
class SerialWorker {
 public:
  SerialWorker();
  ~SerialWorker();
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  // Queues a job. If the worker stops before running it, `on_cancel` runs instead (on the
  // thread that calls stop()). False (and nothing queued or called) once stop() has begun.
  bool post(std::function<void()> job, std::function<void()> on_cancel = {});

  // Lets the running job finish, cancels the queued ones, joins the thread. Idempotent.
  void stop();
  // True once stop() has begun.
  bool stopping() const;

 private:
  struct Job {
    std::function<void()> run;
    std::function<void()> cancel;
  };
  void loop() EXCLUDES(mutex_);

  mutable Mutex mutex_;
  CondVar wake_;
  std::deque<Job> queue_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

// Where the server's handler runs what may wait (issue 33). Without a pool, reads run on the
// connection's thread; without a timer, nothing has a deadline (unit tests).
struct ServingOptions {
  RequestPool* reads = nullptr;
  DeadlineTimer* timer = nullptr;
  // A read that has not answered by then is answered 503 naming `database` (its late answer
  // is dropped); one still queued then never runs.
  std::chrono::milliseconds read_timeout{10000};
  // A mutation still waiting for the worker (behind a step or a mutation) then is answered 503
  // and never runs; one that began is always answered with its result.
  std::chrono::milliseconds mutation_wait{15000};
  std::string database = "the state database";
};

// A 503 with Retry-After (seconds): the client may try again, nothing was done.
HttpServerResponse unavailable(std::string_view message, int retry_after_seconds);

// The server's handler: /health/*, /metrics and /version (the routes that answer while
// loading) on the calling (connection) thread, other reads on `serving.reads`, mutations queued
// on `worker` and answered when they ran (503 if the worker stopped first). While the Api's
// StartupGate is closed, requests other than /health/*, /metrics and /version wait for it
// (503 {"error": "workflows are loading"} after its max_wait). Every answer is counted once in
// the Api's metrics. `api`, `worker` and the pool and timer must outlive the handler.
AsyncHttpHandler make_api_http_handler(const Api& api, SerialWorker& worker,
                                       ServingOptions serving = {});

// --autoSchedule: a step at the current time every `interval`, through `worker`, so that steps
// never overlap each other or a mutation. The first step comes one interval after start. A step
// that runs longer than the interval is followed by the next one at once (no pile-up).
class PeriodicStepper {
 public:
  PeriodicStepper(const Api& api, SerialWorker& worker, std::chrono::milliseconds interval,
                  Clock& clock = system_clock());
  ~PeriodicStepper();
  PeriodicStepper(const PeriodicStepper&) = delete;
  PeriodicStepper& operator=(const PeriodicStepper&) = delete;

  // Waits for a running step to finish and stops. Idempotent.
  void stop();
  // Steps run so far (for tests and logs).
  int steps() const;

 private:
  void loop() EXCLUDES(mutex_);

  const Api& api_;
  SerialWorker& worker_;
  std::chrono::milliseconds interval_;
  Clock& clock_;
  mutable Mutex mutex_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  int steps_ GUARDED_BY(mutex_) = 0;
  std::thread thread_;
};

}  // namespace celos
