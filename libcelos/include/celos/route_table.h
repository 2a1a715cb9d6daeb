// The routes of celos-server's HTTP API as data (SPEC §6, §13): method, path, minimum role,
// whether the route mutates, and what the OpenAPI document says about it, next to its handler.
// The dispatcher (celos::Api), the OpenAPI document and the tests all read this one table, so
// the served routes and the documented ones cannot drift apart.
//
// Registering routes from another file (datasets, operator, cluster):
//
//   void register_dataset_routes(RouteTable& table, Scheduler& scheduler) {
//     table.add({.method = "GET", .path = "/datasets/{id}/instances", .role = Role::kViewer,
//                .summary = "...", .params = {{.name = "id", .in = ParamIn::kPath, ...}},
//                .response_schema = R"({"type":"object"})",
//                .handler = [&scheduler](const HttpServerRequest& r) { ... }});
//   }
//
// and call it on `api.routes()` before the server starts (celos-server's main.cc).
// Path parameters (`{id}`, one whole segment each) reach the handler in request.path_params.
// Not thread-safe while routes are added; read-only (and safe to share) once serving.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "celos/http_server.h"

namespace celos {

// Roles nest (SPEC §16): viewer < operator < admin. kPublic routes never need a token
// (/health/*, the OpenAPI document and the docs page).
enum class Role { kPublic, kViewer, kOperator, kAdmin };
std::string_view to_string(Role role);

// Where a route is served (SPEC §13): the §6 endpoints at their legacy path and under /api/v1/,
// new endpoints only under /api/v1/, and /health/*, /metrics at the root.
enum class Mount { kLegacyAndV1, kV1, kRoot };
inline constexpr std::string_view kApiPrefix = "/api/v1";

enum class ParamIn { kQuery, kPath };

struct RouteParam {
  std::string name;
  ParamIn in = ParamIn::kQuery;
  // OpenAPI schema type: "string", "integer", "boolean"; format e.g. "date-time".
  std::string type = "string";
  std::string format = {};
  bool required = false;
  std::string description = {};
  std::vector<std::string> enum_values = {};
};

using RouteHandler = std::function<HttpServerResponse(const HttpServerRequest&)>;
// Answers several requests of one route at once, in order (one answer each).
using RouteGroupHandler =
    std::function<std::vector<HttpServerResponse>(const std::vector<HttpServerRequest>&)>;

struct Route {
  std::string method;  // "GET" or "POST"
  // Relative to its mount: "/workflow-slots" is served at /workflow-slots and
  // /api/v1/workflow-slots with Mount::kLegacyAndV1.
  std::string path;
  Role role = Role::kViewer;
  // Changes state: runs serialized on the SerialWorker (a grouped route: see group_handler),
  // needs an operator token by default and is written to the audit log.
  bool mutates = false;
  Mount mount = Mount::kV1;
  std::string summary = {};
  std::vector<RouteParam> params = {};
  // The OpenAPI schema (JSON text) of the 200 answer's body.
  std::string response_schema = R"({"type":"object"})";
  std::string content_type = "application/json";
  // Answered before the first load of the workflows has ended (/health/*, /metrics, /version).
  bool while_loading = false;
  RouteHandler handler = {};
  // A mutating route whose requests may run together: those waiting at once are handed to this
  // in one call (one durable write for all of them: dataset announcements, issue 28). `handler`
  // still answers a request alone. Such a route must write nothing that a step or another
  // mutation writes: its requests are serialized only among themselves and run beside the
  // steps (on a worker of their own, ServingOptions::grouped), so that a burst of them never
  // waits for a step, nor a step for them.
  RouteGroupHandler group_handler = {};
};

// The paths a route is served at, e.g. {"/rerun", "/api/v1/rerun"}.
std::vector<std::string> served_paths(const Route& route);

class RouteTable {
 public:
  // Adds a route; throws std::logic_error if a route with the same method and served path
  // exists (a programming error caught by the unit tests).
  void add(Route route);

  struct Match {
    std::vector<const Route*> on_path;  // every route on this path; empty = 404
    const Route* route = nullptr;       // the one for the request's method, if any
    std::map<std::string, std::string> path_params;
  };
  // A trailing slash is ignored (`/workflow-list/` is `/workflow-list`).
  Match match(std::string_view method, std::string_view path) const;

  // In the order added.
  const std::deque<Route>& routes() const { return routes_; }

 private:
  std::vector<const Route*>& list_for(const std::string& path);

  std::deque<Route> routes_;  // stable addresses
  std::unordered_map<std::string, std::vector<const Route*>> exact_;
  std::vector<std::pair<std::vector<std::string>, std::vector<const Route*>>> templates_;
};

}  // namespace celos
