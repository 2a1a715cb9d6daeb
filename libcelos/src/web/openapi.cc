// GET /api/v1/openapi.json is generated from the route table, so the document names exactly the
// routes the server serves (SPEC §13); /api/v1/docs renders it with the embedded swagger-ui.
#include <cctype>

#include <boost/json.hpp>

#include "api_params.h"
#include "celos/api.h"
#include "docs_assets.h"

namespace celos {
namespace {

namespace json = boost::json;

constexpr const char* kComponents = R"json({
  "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer",
    "description": "A token of the --auth-tokens file (roles viewer < operator < admin)"}},
  "responses": {"Error": {"description": "An error",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}},
  "schemas": {
    "Error": {"type": "object", "required": ["error"],
      "properties": {"error": {"type": "string", "description": "what went wrong, naming the parameter"}}},
    "Slot": {"type": "object", "required": ["time", "status", "externalID", "retryCount"],
      "properties": {"time": {"type": "string", "format": "date-time"},
        "status": {"type": "string", "enum": ["WAITING", "READY", "RUNNING", "SUCCESS", "FAILURE",
                                              "WAIT_TIMEOUT", "KILLED"]},
        "externalID": {"type": "string", "nullable": true}, "retryCount": {"type": "integer"}}},
    "WorkflowSlots": {"type": "object",
      "properties": {"id": {"type": "string"},
        "info": {"type": "object", "properties": {"url": {"type": "string", "nullable": true},
          "contacts": {"type": "array", "items": {"type": "object",
            "properties": {"name": {"type": "string"}, "email": {"type": "string"}}}}}},
        "paused": {"type": "boolean"},
        "slots": {"type": "array", "items": {"$ref": "#/components/schemas/Slot"}},
        "error": {"type": "string"}}},
    "TriggerStatus": {"type": "object",
      "properties": {"type": {"type": "string"}, "ready": {"type": "boolean"},
        "description": {"type": "string"},
        "subStatuses": {"type": "array", "items": {"$ref": "#/components/schemas/TriggerStatus"}},
        "nextCheckAt": {"type": "string", "format": "date-time"}}},
    "StepReport": {"type": "object",
      "properties": {"time": {"type": "string", "format": "date-time"},
        "workflows": {"type": "integer"}, "changed": {"type": "integer"},
        "submitted": {"type": "integer"}, "errors": {"type": "array", "items": {"type": "string"}},
        "durationMs": {"type": "integer"},
        "maintenance": {"type": "string", "enum": ["drain", "pause"],
          "description": "present only under maintenance"}}},
    "Maintenance": {"type": "object", "required": ["mode", "reason", "since", "running"],
      "properties": {"mode": {"type": "string", "enum": ["off", "drain", "pause"]},
        "reason": {"type": "string", "nullable": true},
        "since": {"type": "string", "format": "date-time", "nullable": true},
        "running": {"type": "integer", "description": "RUNNING slots as of the last step"}}},
    "Ready": {"type": "object", "required": ["status", "role", "checks"],
      "properties": {"status": {"type": "string", "enum": ["ok", "unavailable"]},
        "role": {"type": "string"},
        "checks": {"type": "object", "properties": {
          "workflows": {"type": "string", "enum": ["ok", "loading"]},
          "stateDatabase": {"type": "string", "description": "ok, or why not"}}},
        "checkedMsAgo": {"type": "integer", "nullable": true,
          "description": "when the background check of the state database last ended"}}},
    "AuditRecord": {"type": "object",
      "properties": {"time": {"type": "string", "format": "date-time"}, "node": {"type": "string"},
        "client": {"type": "string"}, "token": {"type": "string", "nullable": true},
        "method": {"type": "string"}, "path": {"type": "string"}, "query": {"type": "string"},
        "status": {"type": "integer"},
        "truncated": {"type": "object", "additionalProperties": {"type": "integer"},
          "description": "fields cut to their limit, with their original size in bytes"},
        "suppressed": {"type": "integer",
          "description": "this record stands for that many refusals of the client (rate limit)"}}}
  }
})json";

// "/api/v1/workflow-slots" -> "WorkflowSlots"
std::string camel(std::string_view path) {
  if (path.rfind(kApiPrefix, 0) == 0) path.remove_prefix(kApiPrefix.size());
  std::string out;
  bool upper = true;
  for (char c : path) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

json::object parameter(const RouteParam& p) {
  json::object schema{{"type", p.type}};
  if (!p.format.empty()) schema["format"] = p.format;
  if (!p.enum_values.empty()) {
    json::array values;
    for (const auto& v : p.enum_values) values.emplace_back(v);
    schema["enum"] = std::move(values);
  }
  return json::object{{"name", p.name},
                      {"in", p.in == ParamIn::kPath ? "path" : "query"},
                      {"required", p.in == ParamIn::kPath || p.required},
                      {"description", p.description},
                      {"schema", std::move(schema)}};
}

json::object operation(const Route& route, const std::string& path) {
  // The §6 paths (also those served only at the root, like the single-slot /rerun).
  const bool legacy =
      path.rfind(kApiPrefix, 0) != 0 && path.rfind("/health/", 0) != 0 && path != "/metrics";
  std::string method(route.method);
  for (char& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  json::array params;
  for (const auto& p : route.params) params.push_back(parameter(p));
  json::object responses{
      {"200", json::object{
                  {"description", "OK"},
                  {"content",
                   json::object{{route.content_type,
                                 json::object{{"schema", json::parse(route.response_schema)}}}}}}}};
  const json::object error{{"$ref", "#/components/responses/Error"}};
  for (const char* code : {"400", "404", "405", "500"}) responses[code] = error;
  if (route.role != Role::kPublic) {
    responses["401"] = error;
    responses["403"] = error;
  }
  if (route.mutates) {
    responses["409"] = error;  // e.g. step-down on a cluster of one
    responses["502"] = error;
  }
  responses["503"] = error;  // loading, shutting down
  std::string description =
      route.role == Role::kPublic
          ? "Never needs a token."
          : "With --auth-tokens needs a token of role " + std::string(to_string(route.role)) +
                (route.mutates || route.role != Role::kViewer ? "."
                                                              : " when --auth-reads is given.");
  if (legacy && route.mount == Mount::kLegacyAndV1) {
    description += " The SPEC §6 path; the same as " + std::string(kApiPrefix) + route.path + ".";
  }
  json::object op{{"operationId", (legacy ? "legacy" : "") + method + camel(path)},
                  {"summary", route.summary},
                  {"description", description},
                  {"tags", json::array{legacy                           ? "legacy"
                                       : path.rfind(kApiPrefix, 0) == 0 ? "api"
                                                                        : "operations"}},
                  {"parameters", std::move(params)},
                  {"responses", std::move(responses)}};
  op["security"] = route.role == Role::kPublic
                       ? json::array{}
                       : json::array{json::object{{"bearerAuth", json::array{}}}};
  op["x-celos-role"] = to_string(route.role);
  op["x-celos-mutates"] = route.mutates;
  return op;
}

constexpr std::string_view kDocsPage = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>celos-server API</title>
<link rel="icon" type="image/png" href="/api/v1/docs/favicon-32x32.png">
<link rel="stylesheet" href="/api/v1/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/api/v1/docs/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({url: "/api/v1/openapi.json", dom_id: "#swagger-ui"});
</script>
</body>
</html>
)html";

}  // namespace

std::string openapi_json(const RouteTable& table, const std::string& version) {
  json::object paths;
  for (const Route& route : table.routes()) {
    for (const std::string& path : served_paths(route)) {
      std::string method(route.method);
      for (char& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      json::value& item = paths[path];
      if (!item.is_object()) item.emplace_object();
      item.as_object()[method] = operation(route, path);
    }
  }
  json::object doc{{"openapi", "3.0.3"},
                   {"info", json::object{{"title", "celos-server"},
                                         {"version", version},
                                         {"description",
                                          "The HTTP API of celos-server (SPEC §6, §13). Times "
                                          "are ISO-8601 UTC; errors are {\"error\": \"...\"}."}}},
                   {"paths", std::move(paths)},
                   {"components", json::parse(kComponents)}};
  return json::serialize(doc);
}

void register_docs_routes(RouteTable& table, const Api& api) {
  table.add({.method = "GET",
             .path = "/openapi.json",
             .role = Role::kPublic,
             .summary = "The OpenAPI 3 document of every route this server serves",
             .handler = [&api](const HttpServerRequest&) {
               HttpServerResponse response;
               response.body = openapi_json(api.routes(), api.options().version);
               return response;
             }});
  table.add({.method = "GET",
             .path = "/docs",
             .role = Role::kPublic,
             .summary = "An HTML page that renders the OpenAPI document",
             .response_schema = R"({"type":"string"})",
             .content_type = "text/html; charset=utf-8",
             .handler = [](const HttpServerRequest&) {
               HttpServerResponse response;
               response.content_type = "text/html; charset=utf-8";
               response.body = kDocsPage;
               return response;
             }});
  for (const DocsAsset& asset : docs_assets()) {
    table.add({.method = "GET",
               .path = "/docs/" + std::string(asset.name),
               .role = Role::kPublic,
               .summary = "An asset of the docs page (swagger-ui-dist)",
               .response_schema = R"({"type":"string"})",
               .content_type = std::string(asset.content_type),
               .handler = [&asset](const HttpServerRequest&) {
                 HttpServerResponse response;
                 response.content_type = std::string(asset.content_type);
                 response.body = std::string(asset.data);
                 response.headers["Cache-Control"] = "public, max-age=86400";
                 return response;
               }});
  }
}

}  // namespace celos
