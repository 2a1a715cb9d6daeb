// The JSON HTTP API of celos-server (SPEC §6) as plain objects, testable without sockets:
//
//   Api              HttpServerRequest -> HttpServerResponse over a Scheduler
//
// How the server serves it (a worker for steps and mutations, the startup gate, the periodic
// stepper) is in celos/api_serving.h.
//
// Routes are data (celos/route_table.h): the §6 endpoints are served at their legacy paths and
// under /api/v1/; docs/http-api.md has the shapes.
//
// Errors are {"error": "..."}: 400 bad or missing parameter (the message names it) or illegal
// transition, 404 unknown workflow/slot/path, 405 wrong method (with an Allow header), 502 an
// external service or file system failed, 500 corrupt stored data or a bug (exceptions are
// caught per request). All times are UTC (SPEC §2).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "celos/audit.h"
#include "celos/auth.h"
#include "celos/backfill.h"
#include "celos/clock.h"
#include "celos/db_watch.h"
#include "celos/event_source.h"
#include "celos/host_check.h"
#include "celos/http_server.h"
#include "celos/metrics.h"
#include "celos/mutex.h"
#include "celos/route_table.h"
#include "celos/scheduler.h"
#include "celos/state_db.h"
#include "celos/time.h"
#include "celos/version.h"

namespace celos {

class StartupGate;
class RunningJobs;

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
  // Event-driven steps (issue 28, --autoSchedule only): announcements, reruns, kills and range
  // operations report the workflows they may have made ready; empty = nobody listens.
  EventSink on_event = {};
  // The index GET /api/v1/oozie-notification answers from (celos/running_jobs.h); null = Oozie
  // notifications are off (the route answers 404). Not owned.
  const RunningJobs* running_jobs = nullptr;
  // The most slots a backfill plan may cover (--max-backfill-slots; celos/backfill.h).
  std::size_t max_backfill_slots = kDefaultMaxBackfillSlots;
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
  // True for the mutations whose route runs requests together (Route::group_handler). They
  // write nothing a step or another mutation writes, so they run beside those: the server
  // queues them on a worker of their own (ServingOptions::grouped).
  bool is_grouped(const HttpServerRequest& request) const;
  // Answers several requests as handle() would, one answer each in order, running those of a
  // grouped route that pass the checks together in one call of its group_handler (each still
  // checked and audited alone). Never throws.
  std::vector<HttpServerResponse> handle_group(
      const std::vector<const HttpServerRequest*>& requests) const;

  // One step, serialized with the mutations, logged with its duration (and `cause`, a partial
  // step's reason: Scheduler::step).
  StepReport step(Time now, const std::optional<std::set<std::string>>& ids = std::nullopt,
                  std::string_view cause = {}) const;
  // A step for a handler that already holds the mutation lock (a mutating route's handler).
  StepReport step_locked(Time now, const std::optional<std::set<std::string>>& ids,
                         std::string_view cause = {}) const;
  // Reports an event to options().on_event, if set (issue 28). Never blocks.
  void post_event(EventSource source, const std::vector<std::string>& workflows) const;

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
  std::vector<HttpServerResponse> run_group(const Route& route,
                                            const std::vector<HttpServerRequest>& calls) const;
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
  // Serializes the routes that have a group_handler (dataset announcements), by either handler,
  // among themselves only: they run beside the steps and the other mutations.
  mutable Mutex group_mutex_;
};

// The §6 routes (api_handlers.cc), registered by Api's constructor.
void register_core_routes(RouteTable& table, const Api& api);
// The dataset routes of SPEC §14 (datasets_api.cc), registered by Api's constructor.
void register_dataset_routes(RouteTable& table, const Api& api);
// /api/v1/schedule-preview (schedule_preview_api.cc, issue 26).
void register_schedule_preview_routes(RouteTable& table, const Api& api);
// GET /api/v1/deadlines and POST /api/v1/deadline (deadlines_api.cc, issue 27).
void register_deadline_routes(RouteTable& table, const Api& api);
// /health/*, /metrics, /api/v1/maintenance and /api/v1/audit (ops_api.cc).
void register_ops_routes(RouteTable& table, const Api& api);
// /api/v1/backfills and its plans (backfills_api.cc; issue 29).
void register_backfill_routes(RouteTable& table, const Api& api);
// /api/v1/openapi.json, /api/v1/docs and its assets (openapi.cc).
void register_docs_routes(RouteTable& table, const Api& api);
// The OpenAPI 3 document (JSON text) of every route in `table`.
std::string openapi_json(const RouteTable& table, const std::string& version);

}  // namespace celos
