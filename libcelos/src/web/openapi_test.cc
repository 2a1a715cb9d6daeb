#include <functional>
#include <set>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "celos/api.h"
#include "testing/api_world.h"

namespace {

namespace json = boost::json;
using namespace celos;

// The Api of an empty world, as celos-server serves it.
struct Served : celos::testing::ApiWorld {
  Served() { serve(); }
};

void collect_refs(const json::value& v, std::set<std::string>& refs) {
  if (v.is_object()) {
    for (const auto& [key, value] : v.get_object()) {
      if (key == "$ref" && value.is_string()) refs.insert(std::string(value.get_string()));
      collect_refs(value, refs);
    }
  } else if (v.is_array()) {
    for (const auto& item : v.get_array()) collect_refs(item, refs);
  }
}

TEST_CASE("The OpenAPI document names exactly the routes of the table, under every served path") {
  Served s;
  // A route registered by another file appears too, path parameter included.
  s.api->routes().add({.method = "GET",
                       .path = "/test-only/{id}/things",
                       .params = {{.name = "id", .in = ParamIn::kPath}},
                       .handler = [](const HttpServerRequest&) { return HttpServerResponse{}; }});
  const json::value doc = json::parse(openapi_json(s.api->routes(), "1.2.3"));
  CHECK(doc.at("openapi").as_string().starts_with("3."));
  std::set<std::string> served, documented;
  for (const Route& route : s.api->routes().routes()) {
    for (const auto& path : served_paths(route)) served.insert(route.method + " " + path);
  }
  std::set<std::string> operation_ids;
  for (const auto& [path, item] : doc.at("paths").as_object()) {
    for (const auto& [method, op] : item.as_object()) {
      std::string upper(method);
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      documented.insert(upper + " " + std::string(path));
      CHECK(operation_ids.insert(std::string(op.at("operationId").as_string())).second);
      CHECK(op.as_object().contains("responses"));
    }
  }
  CHECK(served == documented);
  CHECK(served.count("GET /workflow-slots"));
  CHECK(served.count("GET /api/v1/workflow-slots"));
  CHECK(served.count("POST /api/v1/maintenance"));
  CHECK(served.count("GET /health/ready"));
  CHECK(served.count("GET /api/v1/test-only/{id}/things"));
  const auto& instances = doc.at("paths").at("/api/v1/test-only/{id}/things").at("get");
  CHECK(instances.at("parameters").at(0).at("in") == "path");
}

TEST_CASE("Every $ref of the document resolves and every parameter has a schema") {
  Served s;
  const json::value doc = json::parse(openapi_json(s.api->routes(), "1.2.3"));
  std::set<std::string> refs;
  collect_refs(doc, refs);
  CHECK(refs.count("#/components/schemas/Error"));
  for (const std::string& ref : refs) {
    INFO(ref);
    REQUIRE(ref.starts_with("#/components/"));
    const json::value* target = &doc.at("components");
    std::string_view rest = std::string_view(ref).substr(std::string_view("#/components/").size());
    while (!rest.empty()) {
      const auto slash = rest.find('/');
      target = target->as_object().if_contains(rest.substr(0, slash));
      REQUIRE(target != nullptr);
      rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    }
  }
  const auto& slots = doc.at("paths").at("/api/v1/workflow-slots").at("get");
  std::set<std::string> names;
  for (const auto& p : slots.at("parameters").as_array()) {
    names.insert(std::string(p.at("name").as_string()));
    CHECK(p.as_object().contains("schema"));
  }
  CHECK(names == std::set<std::string>{"id", "start", "end"});
}

}  // namespace
