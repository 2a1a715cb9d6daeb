// The dispatcher: finds the route, checks the method and runs the handler (serialized for
// mutating routes). The handlers of the §6 routes are in api_handlers.cc.
#include "celos/api.h"

#include <exception>
#include <map>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/api_serving.h"
#include "celos/running_jobs.h"
#include "web/operator_api.h"

namespace celos {
namespace {

std::string_view strip_slash(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path;
}

HttpServerResponse method_not_allowed(const HttpServerRequest& request,
                                      const RouteTable::Match& match) {
  std::set<std::string> methods;
  for (const Route* route : match.on_path) methods.insert(route->method);
  std::string allowed;
  for (const std::string& method : methods) {
    if (!allowed.empty()) allowed += ", ";
    allowed += method;
  }
  auto response = json_error(405, fmt::format("method {} not allowed on {}: use {}", request.method,
                                              strip_slash(request.path), allowed));
  response.headers["Allow"] = allowed;
  return response;
}

}  // namespace

Api::Api(Scheduler& scheduler, ApiOptions options)
    : scheduler_(scheduler), options_(std::move(options)), metrics_(options_.metrics) {
  if (metrics_ == nullptr) {
    own_metrics_ = std::make_unique<Metrics>();
    metrics_ = own_metrics_.get();
  }
  metrics_->set_leader_source([this] { return cluster_role() == "leader"; });
  metrics_->set_clock_skew_source([this]() -> std::optional<double> {
    auto skew = options_.clock_skew ? options_.clock_skew() : std::nullopt;
    if (!skew) return std::nullopt;
    return static_cast<double>(skew->count()) / 1000.0;
  });
  register_core_routes(routes_, *this);
  register_operator_routes(routes_, *this);
  register_dataset_routes(routes_, *this);
  register_schedule_preview_routes(routes_, *this);
  register_deadline_routes(routes_, *this);
  register_ops_routes(routes_, *this);
  register_oozie_notification_route(routes_, *this, options_.running_jobs);
  register_backfill_routes(routes_, *this);
  register_docs_routes(routes_, *this);
}

std::string Api::cluster_role() const {
  return options_.cluster_role ? options_.cluster_role() : "leader";
}

bool Api::workflows_loaded() const {
  return options_.startup == nullptr || options_.startup->is_open();
}

bool Api::answers_while_loading(const HttpServerRequest& request) const {
  const RouteTable::Match match = routes_.match(request.method, request.path);
  return match.route != nullptr && match.route->while_loading;
}

Time Api::now() const {
  if (options_.clock) return options_.clock();
  return options_.time_source->now();
}

bool Api::is_mutation(const HttpServerRequest& request) const {
  const RouteTable::Match match = routes_.match(request.method, request.path);
  return match.route != nullptr && match.route->mutates;
}

bool Api::is_grouped(const HttpServerRequest& request) const {
  const RouteTable::Match match = routes_.match(request.method, request.path);
  return match.route != nullptr && match.route->mutates && match.route->group_handler;
}

std::vector<HttpServerResponse> Api::handle_group(
    const std::vector<const HttpServerRequest*>& requests) const {
  std::vector<HttpServerResponse> out(requests.size());
  std::vector<Checked> checked;
  checked.reserve(requests.size());
  std::map<const Route*, std::vector<std::size_t>> by_route;  // the requests that passed
  for (std::size_t i = 0; i < requests.size(); ++i) {
    checked.push_back(check(*requests[i]));
    if (checked[i].refusal) {
      out[i] = std::move(*checked[i].refusal);
    } else if (!checked[i].match.route->group_handler) {
      out[i] = handle(*requests[i]);
    } else {
      by_route[checked[i].match.route].push_back(i);
    }
  }
  for (const auto& [route, indexes] : by_route) {
    std::vector<HttpServerRequest> calls;
    for (std::size_t i : indexes) {
      calls.push_back(*requests[i]);
      calls.back().path_params = checked[i].match.path_params;
      calls.back().token_name = checked[i].token;
    }
    std::vector<HttpServerResponse> answers = run_group(*route, calls);
    for (std::size_t k = 0; k < indexes.size(); ++k) {
      out[indexes[k]] = std::move(answers[k]);
      audit(*requests[indexes[k]], checked[indexes[k]].token, out[indexes[k]].status);
    }
  }
  return out;
}

// A group handler's answers, one per call whatever it does (an exception is a 500 for all).
std::vector<HttpServerResponse> Api::run_group(const Route& route,
                                               const std::vector<HttpServerRequest>& calls) const {
  std::vector<HttpServerResponse> answers;
  try {
    MutexLock lock(group_mutex_);
    answers = route.group_handler(calls);
  } catch (const std::exception& e) {
    spdlog::error("{} {} and {} more failed: {}", route.method, route.path, calls.size() - 1,
                  e.what());
    answers.assign(calls.size(), json_error(500, std::string("internal error: ") + e.what()));
  } catch (...) {
    answers.assign(calls.size(), json_error(500, "internal error"));
  }
  answers.resize(calls.size(), json_error(500, "internal error: no answer"));
  return answers;
}

HttpServerResponse Api::handle(const HttpServerRequest& request) const {
  try {
    return dispatch(request);
  } catch (const std::exception& e) {
    spdlog::error("{} {} failed: {}", request.method, request.target, e.what());
    return json_error(500, std::string("internal error: ") + e.what());
  } catch (...) {
    spdlog::error("{} {} failed with an unknown exception", request.method, request.target);
    return json_error(500, "internal error");
  }
}

// SPEC §16's order: Host/Origin (403), route (404), method (405), token (401/403), then the
// handler's own parameter checks (400). Mutating routes are audited, accepted or refused.
Api::Checked Api::check(const HttpServerRequest& request) const {
  Checked c{std::nullopt, routes_.match(request.method, request.path), ""};
  const bool mutating = c.match.route != nullptr && c.match.route->mutates;
  if (options_.hosts) {
    const bool writes = mutating || (request.method != "GET" && request.method != "HEAD");
    if (auto refused = check_host_and_origin(*options_.hosts, request, writes)) {
      if (mutating) audit(request, "", 403, true);
      c.refusal = json_error(403, *refused);
      return c;
    }
  }
  if (c.match.on_path.empty()) {
    c.refusal = json_error(404, "no such endpoint: " + request.path);
  } else if (c.match.route == nullptr) {
    c.refusal = method_not_allowed(request, c.match);
  } else {
    AuthResult auth = authorize(options_.auth, c.match.route->role, mutating, request);
    if (auth.refusal) {
      if (mutating) audit(request, auth.token_name, auth.refusal->status, true);
      c.refusal = std::move(auth.refusal);
    }
    c.token = std::move(auth.token_name);
  }
  return c;
}

std::optional<HttpServerResponse> Api::refusal(const HttpServerRequest& request) const {
  return check(request).refusal;
}

HttpServerResponse Api::dispatch(const HttpServerRequest& request) const {
  Checked c = check(request);
  if (c.refusal) return std::move(*c.refusal);
  const Route& route = *c.match.route;
  HttpServerResponse response = run_route(route, request, c.match, c.token);
  if (route.mutates) audit(request, c.token, response.status);
  return response;
}

HttpServerResponse Api::run_route(const Route& route, const HttpServerRequest& request,
                                  const RouteTable::Match& match, const std::string& token) const {
  // Path parameters and the token's name need a copy of the request; the common reads have none.
  std::optional<HttpServerRequest> copy;
  if (!match.path_params.empty() || !token.empty()) {
    copy.emplace(request);
    copy->path_params = match.path_params;
    copy->token_name = token;
  }
  const HttpServerRequest& call = copy ? *copy : request;
  if (!route.mutates) return route.handler(call);
  MutexLock lock(route.group_handler ? group_mutex_ : mutation_mutex_);
  return route.handler(call);
}

void Api::audit_answer(const HttpServerRequest& request, int status, bool refused) const {
  Checked c = check(request);
  if (!c.refusal) audit(request, c.token, status, refused);  // a refusal was audited by check()
}

void Api::audit(const HttpServerRequest& request, const std::string& token, int status,
                bool refused) const {
  if (options_.audit == nullptr || request.audited_by_peer) return;
  AuditRecord record;
  record.time = now();
  record.node = options_.node;
  // The peer's address without its port.
  record.client = request.remote.substr(0, request.remote.rfind(':'));
  if (!token.empty()) record.token = token;
  record.method = request.method;
  record.path = request.path;
  const auto question = request.target.find('?');
  if (question != std::string::npos) record.query = request.target.substr(question + 1);
  record.status = status;
  record.refused = refused;
  bound_audit_record(record);  // a 15 KB query costs the log 2 KB at most
  options_.audit->append(record);
}

StepReport Api::step(Time now, const std::optional<std::set<std::string>>& ids,
                     std::string_view cause) const {
  MutexLock lock(mutation_mutex_);
  return step_locked(now, ids, cause);
}

void Api::post_event(EventSource source, const std::vector<std::string>& workflows) const {
  if (options_.on_event && !workflows.empty()) options_.on_event(source, workflows);
}

StepReport Api::step_locked(Time now, const std::optional<std::set<std::string>>& ids,
                            std::string_view cause) const {
  // Cluster (SPEC §11): only the leader steps; a node that is not (any more) skips the step.
  if (options_.may_step && !options_.may_step()) {
    StepReport skipped;
    skipped.now = now;
    skipped.errors.push_back("not stepped: this node is not the cluster's leader");
    return skipped;
  }
  // The scheduler logs the step's start, end and slot changes itself.
  const auto started = options_.time_source->monotonic();
  StepReport report = scheduler_.step(now, ids, cause);
  if (report.duration.count() == 0) {
    report.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
        options_.time_source->monotonic() - started);
  }
  return report;
}

}  // namespace celos
