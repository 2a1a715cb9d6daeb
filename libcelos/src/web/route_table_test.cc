#include "celos/route_table.h"

#include <stdexcept>

#include <catch2/catch.hpp>

namespace {

using namespace celos;

RouteHandler answer(std::string body) {
  return [body](const HttpServerRequest&) {
    HttpServerResponse response;
    response.body = body;
    return response;
  };
}

TEST_CASE("A legacy route is served at its own path and under /api/v1/, a new one only there") {
  RouteTable table;
  table.add({.method = "GET",
             .path = "/workflow-list",
             .mount = Mount::kLegacyAndV1,
             .handler = answer("list")});
  table.add({.method = "GET", .path = "/maintenance", .handler = answer("get")});
  table.add(
      {.method = "GET", .path = "/health/live", .mount = Mount::kRoot, .handler = answer("live")});
  CHECK(table.match("GET", "/workflow-list").route != nullptr);
  CHECK(table.match("GET", "/api/v1/workflow-list/").route != nullptr);
  CHECK(table.match("GET", "/api/v1/maintenance").route != nullptr);
  CHECK(table.match("GET", "/maintenance").on_path.empty());
  CHECK(table.match("GET", "/health/live").route != nullptr);
  CHECK(table.match("GET", "/api/v1/health/live").on_path.empty());
}

TEST_CASE("Two methods on one path are two routes, another method finds the path but no route") {
  RouteTable table;
  table.add({.method = "GET", .path = "/maintenance", .handler = answer("get")});
  table.add({.method = "POST", .path = "/maintenance", .mutates = true, .handler = answer("post")});
  const auto post = table.match("POST", "/api/v1/maintenance");
  REQUIRE(post.route != nullptr);
  CHECK(post.route->mutates);
  const auto put = table.match("PUT", "/api/v1/maintenance");
  CHECK(put.route == nullptr);
  CHECK(put.on_path.size() == 2);
}

TEST_CASE("Path parameters match one whole segment and reach the match") {
  RouteTable table;
  table.add({.method = "GET", .path = "/datasets/{id}/instances", .handler = answer("x")});
  const auto match = table.match("GET", "/api/v1/datasets/logs.daily/instances");
  REQUIRE(match.route != nullptr);
  CHECK(match.path_params.at("id") == "logs.daily");
  CHECK(table.match("GET", "/api/v1/datasets//instances").on_path.empty());
  CHECK(table.match("GET", "/api/v1/datasets/a/b/instances").on_path.empty());
}

TEST_CASE("Registering a method and path twice is a programming error") {
  RouteTable table;
  table.add(
      {.method = "GET", .path = "/version", .mount = Mount::kLegacyAndV1, .handler = answer("v")});
  CHECK_THROWS_AS(table.add({.method = "GET", .path = "/version", .handler = answer("v")}),
                  std::logic_error);
  CHECK_THROWS_AS(table.add({.method = "GET", .path = "no-slash", .handler = answer("v")}),
                  std::logic_error);
  CHECK(table.routes().size() == 1);
  CHECK(served_paths(table.routes().front()) ==
        std::vector<std::string>{"/version", "/api/v1/version"});
}

}  // namespace
