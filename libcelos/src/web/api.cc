// The dispatcher: finds the route, checks the method and runs the handler (serialized for
// mutating routes). The handlers of the §6 routes are in api_handlers.cc.
#include "celos/api.h"
#include "celos/operator_api.h"

#include <exception>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace celos {
namespace {

std::string_view trim_slash(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path;
}

HttpServerResponse method_not_allowed(const HttpServerRequest& request,
                                      const RouteTable::Match& match) {
  std::string allowed;
  for (const Route* route : match.on_path) {
    if (!allowed.empty()) allowed += ", ";
    allowed += route->method;
  }
  auto response =
      json_error(405, fmt::format("method {} not allowed on {}: use {}", request.method,
                                  trim_slash(request.path), allowed));
  response.headers["Allow"] = allowed;
  return response;
}

}  // namespace

Api::Api(Scheduler& scheduler, ApiOptions options)
    : scheduler_(scheduler), options_(std::move(options)) {
  register_core_routes(routes_, *this);
  register_operator_routes(routes_, *this);
  register_dataset_routes(routes_, *this);
}

Time Api::now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::time_point_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now());
}

bool Api::is_mutation(const HttpServerRequest& request) const {
  const RouteTable::Match match = routes_.match(request.method, request.path);
  return match.route != nullptr && match.route->mutates;
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

HttpServerResponse Api::dispatch(const HttpServerRequest& request) const {
  const RouteTable::Match match = routes_.match(request.method, request.path);
  if (match.on_path.empty()) return json_error(404, "no such endpoint: " + request.path);
  if (match.route == nullptr) return method_not_allowed(request, match);
  const Route& route = *match.route;
  // Path parameters need a copy of the request; the common routes have none.
  std::optional<HttpServerRequest> with_params;
  if (!match.path_params.empty()) {
    with_params.emplace(request);
    with_params->path_params = match.path_params;
  }
  const HttpServerRequest& call = with_params ? *with_params : request;
  if (!route.mutates) return route.handler(call);
  std::lock_guard lock(mutation_mutex_);
  return route.handler(call);
}

StepReport Api::step(Time now, const std::optional<std::set<std::string>>& ids) const {
  std::lock_guard lock(mutation_mutex_);
  return step_locked(now, ids);
}

StepReport Api::step_locked(Time now, const std::optional<std::set<std::string>>& ids) const {
  // Cluster (SPEC §11): only the leader steps; a node that is not (any more) skips the step.
  if (options_.may_step && !options_.may_step()) {
    StepReport skipped;
    skipped.now = now;
    skipped.errors.push_back("not stepped: this node is not the cluster's leader");
    return skipped;
  }
  // The scheduler logs the step's start, end and slot changes itself.
  const auto started = std::chrono::steady_clock::now();
  StepReport report = scheduler_.step(now, ids);
  if (report.duration.count() == 0) {
    report.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
  }
  return report;
}

}  // namespace celos
