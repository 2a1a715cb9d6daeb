// Every /api/v1 route of the served OpenAPI document has a command (issue 31): a new route
// without one fails here, and so does a command naming a route the server does not serve.
#include <map>
#include <set>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "celos/api.h"
#include "celos/cli.h"
#include "celos/cluster_api.h"
#include "testing/api_world.h"

namespace {

namespace json = boost::json;
using namespace celos;

// The routes as celos-server serves them: the Api's own and the cluster's.
struct Served : celos::testing::ApiWorld {
  std::unique_ptr<Cluster> cluster = make_single_node_cluster({.node_id = "n", .url = "http://n"});

  Served() {
    serve();
    register_cluster_routes(api->routes(), *cluster);
  }

  // "METHOD /path" of every operation in the OpenAPI document.
  std::set<std::string> documented() const {
    const json::value doc = json::parse(openapi_json(api->routes(), "test"));
    std::set<std::string> out;
    for (const auto& [path, item] : doc.at("paths").as_object()) {
      for (const auto& [method, op] : item.as_object()) {
        std::string upper(method);
        for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        out.insert(upper + " " + std::string(path));
      }
    }
    return out;
  }
};

// A CLI route ("GET /api/v1/docs/{asset}") covers a documented one when they agree segment by
// segment, a {placeholder} standing for any one segment.
bool covers(const std::string& pattern, const std::string& route) {
  std::size_t p = 0, r = 0;
  while (p < pattern.size() && r < route.size()) {
    if (pattern[p] == '{') {
      p = pattern.find('}', p) + 1;
      const auto slash = route.find('/', r);
      r = slash == std::string::npos ? route.size() : slash;
    } else if (pattern[p++] != route[r++]) {
      return false;
    }
  }
  return p == pattern.size() && r == route.size();
}

// Machine-to-machine routes no operator calls, with the reason no command exists for them.
const std::map<std::string, std::string> kNoCommand = {
    {"GET /api/v1/oozie-notification",
     "Oozie calls it when a job changes state (issue 28); an operator has /rerun and /scheduler"},
};

// The /api/v1 operations of the served document that no command names.
std::vector<std::string> uncovered(const Served& served) {
  std::vector<std::string> cli_routes, out;
  for (const CliCommandInfo& command : cli_commands()) {
    for (const std::string& route : command.routes) cli_routes.push_back(route);
  }
  for (const std::string& route : served.documented()) {
    if (route.find(" /api/v1/") == std::string::npos || kNoCommand.count(route)) continue;
    bool found = false;
    for (const std::string& pattern : cli_routes) found = found || covers(pattern, route);
    if (!found) out.push_back(route);
  }
  return out;
}

TEST_CASE("Every /api/v1 route of the served OpenAPI document is behind a command") {
  Served served;
  INFO("routes without a command in the celos command line's table (libcelos/src/cli/)");
  CHECK(uncovered(served) == std::vector<std::string>{});
  CHECK(served.documented().size() > 30);
}

TEST_CASE("A new /api/v1 route without a command is found") {
  Served served;
  served.api->routes().add(
      {.method = "POST",
       .path = "/example-routes/{id}/cancel",
       .params = {{.name = "id", .in = ParamIn::kPath}},
       .handler = [](const HttpServerRequest&) { return HttpServerResponse{}; }});
  CHECK(uncovered(served) == std::vector<std::string>{"POST /api/v1/example-routes/{id}/cancel"});
}

TEST_CASE("Every route a command names is served") {
  Served served;
  const std::set<std::string> documented = served.documented();
  for (const CliCommandInfo& command : cli_commands()) {
    for (const std::string& route : command.routes) {
      bool found = false;
      for (const std::string& d : documented) found = found || covers(route, d);
      INFO(command.name << ": " << route);
      CHECK(found);
    }
  }
}

TEST_CASE("A route pattern covers the paths it stands for, and only those") {
  CHECK(covers("GET /api/v1/docs/{asset}", "GET /api/v1/docs/swagger-ui.css"));
  CHECK(covers("GET /api/v1/datasets/{id}/instances", "GET /api/v1/datasets/{id}/instances"));
  CHECK_FALSE(covers("GET /api/v1/docs/{asset}", "GET /api/v1/docs"));
  CHECK_FALSE(covers("GET /api/v1/docs/{asset}", "GET /api/v1/docs/a/b"));
  CHECK_FALSE(covers("POST /api/v1/rerun", "GET /api/v1/rerun"));
}

}  // namespace
