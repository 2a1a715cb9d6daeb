// The operations routes of SPEC §13: health, metrics, maintenance and the audit trail.
#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api_params.h"
#include "celos/api.h"
#include "celos/cluster.h"
#include "celos/kubernetes_service.h"

namespace celos {
namespace {

namespace json = boost::json;

HttpServerResponse health_live(const Api& api) {
  return json_response(json::object{{"status", "ok"}, {"role", api.cluster_role()}});
}

// "ok", or a warning naming the skew when this node's clock and the database's differ by more
// than kClockSkewWarning; nothing when not measured (the file backend).
std::optional<std::string> clock_check(const Api& api) {
  const auto& source = api.options().clock_skew;
  const auto skew = source ? source() : std::nullopt;
  if (!skew) return std::nullopt;
  if (std::chrono::abs(*skew) <= kClockSkewWarning) return "ok";
  return fmt::format("warning: this node's clock is {:.1f} s {} the state database's",
                     std::abs(static_cast<double>(skew->count())) / 1000.0,
                     skew->count() > 0 ? "behind" : "ahead of");
}

HttpServerResponse health_ready(const Api& api) {
  const bool loaded = api.workflows_loaded();
  std::string database = "ok";
  json::value checked_ms_ago = nullptr;
  if (const DatabaseWatch* watch = api.options().db_watch) {
    // Never the database itself: the last answer of the background check, and its age.
    DatabaseWatch::Seen seen = watch->last();
    database = std::move(seen.status);
    if (seen.age) checked_ms_ago = seen.age->count();
  } else if (StateDatabase* db = api.options().db) {
    if (auto ok = db->check(); !ok) database = ok.error().message;
  }
  const bool ready = loaded && database == "ok";
  json::object checks{{"workflows", loaded ? "ok" : "loading"}, {"stateDatabase", database}};
  if (auto clock = clock_check(api)) checks["clock"] = *clock;  // a warning: ready all the same
  // How the Kubernetes API servers took celos's credentials: a warning, ready all the same.
  if (auto kube = kubernetes_health()) checks["kubernetes"] = *kube;
  return json_response(json::object{{"status", ready ? "ok" : "unavailable"},
                                    {"role", api.cluster_role()},
                                    {"checks", std::move(checks)},
                                    {"checkedMsAgo", checked_ms_ago}},
                       ready ? 200 : 503);
}

HttpServerResponse metrics(const Api& api) {
  // While loading, config() would load the workflows itself: nothing to count yet.
  const WorkflowConfigPtr config = api.workflows_loaded() ? api.scheduler().config() : nullptr;
  HttpServerResponse response;
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  response.body = api.metrics().render(config.get());
  return response;
}

json::object maintenance_json(const Api& api, const Maintenance& m) {
  return json::object{
      {"mode", to_string(m.mode)},
      {"reason", m.reason ? json::value(*m.reason) : json::value(nullptr)},
      {"since", m.since ? json::value(format_time(*m.since)) : json::value(nullptr)},
      {"running", api.metrics().running_slots()}};
}

HttpServerResponse get_maintenance(const Api& api) {
  if (api.options().db == nullptr) return json_error(500, "no state database configured");
  auto current = api.options().db->maintenance();
  if (!current) return error_response(current.error());
  return json_response(maintenance_json(api, *current));
}

HttpServerResponse post_maintenance(const Api& api, const HttpServerRequest& request) {
  auto mode_text = required_param(request, "mode");
  if (!mode_text) return error_response(mode_text.error());
  auto mode = parse_maintenance_mode(*mode_text);
  if (!mode) return json_error(400, "parameter mode: " + mode.error().message);
  StateDatabase* db = api.options().db;
  if (db == nullptr) return json_error(500, "no state database configured");
  auto current = db->maintenance();
  if (!current) return error_response(current.error());
  Maintenance next;
  next.mode = *mode;
  if (const std::string* reason = query_param(request, "reason"); reason && !reason->empty()) {
    next.reason = *reason;
  }
  // Asking for the mode it is in keeps the time it was entered.
  next.since = current->mode == *mode && current->since ? current->since : api.now();
  if (auto written = db->set_maintenance(next); !written) return error_response(written.error());
  api.metrics().set_maintenance(next.mode);
  spdlog::info("maintenance mode {} (was {}){}", to_string(next.mode), to_string(current->mode),
               next.reason ? ": " + *next.reason : "");
  return json_response(maintenance_json(api, next));
}

HttpServerResponse get_audit(const Api& api, const HttpServerRequest& request) {
  auto since = optional_time_param(request, "since");
  if (!since) return error_response(since.error());
  auto limit = int_param(request, "limit", 100, 1, 1000);
  if (!limit) return error_response(limit.error());
  json::array out;
  if (AuditSink* sink = api.options().audit) {
    auto records = sink->latest(*since, static_cast<std::size_t>(*limit));
    if (!records) return error_response(records.error());
    for (const AuditRecord& r : *records) out.push_back(json::parse(audit_record_to_json(r)));
  }
  return json_response(json::object{{"records", std::move(out)}});
}

constexpr const char* kMaintenanceSchema = R"({"$ref":"#/components/schemas/Maintenance"})";

}  // namespace

void register_ops_routes(RouteTable& table, const Api& api) {
  table.add({.method = "GET",
             .path = "/health/live",
             .role = Role::kPublic,
             .mount = Mount::kRoot,
             .summary = "200 while the process serves requests",
             .response_schema = R"({"type":"object","properties":{"status":{"type":"string"},)"
                                R"("role":{"type":"string"}}})",
             .while_loading = true,
             .handler = [&api](const HttpServerRequest&) { return health_live(api); }});
  table.add({.method = "GET",
             .path = "/health/ready",
             .role = Role::kPublic,
             .mount = Mount::kRoot,
             .summary = "200 when the workflows are loaded and the state database answers, "
                        "503 otherwise (same shape)",
             .response_schema = R"({"$ref":"#/components/schemas/Ready"})",
             .while_loading = true,
             .handler = [&api](const HttpServerRequest&) { return health_ready(api); }});
  table.add({.method = "GET",
             .path = "/metrics",
             .mount = Mount::kRoot,
             .summary = "Prometheus metrics (text format 0.0.4)",
             .response_schema = R"({"type":"string"})",
             .content_type = "text/plain; version=0.0.4; charset=utf-8",
             .while_loading = true,
             .handler = [&api](const HttpServerRequest&) { return metrics(api); }});
  table.add({.method = "GET",
             .path = "/maintenance",
             .summary = "The maintenance mode",
             .response_schema = kMaintenanceSchema,
             .handler = [&api](const HttpServerRequest&) { return get_maintenance(api); }});
  table.add({.method = "POST",
             .path = "/maintenance",
             .role = Role::kAdmin,
             .mutates = true,
             .summary = "Set the maintenance mode: drain (nothing new is submitted), pause "
                        "(steps do nothing) or off",
             .params = {{.name = "mode",
                         .required = true,
                         .description = "the new mode",
                         .enum_values = {"off", "drain", "pause"}},
                        {.name = "reason", .description = "why (shown by the UI)"}},
             .response_schema = kMaintenanceSchema,
             .handler = [&api](const HttpServerRequest& r) { return post_maintenance(api, r); }});
  table.add({.method = "GET",
             .path = "/audit",
             .role = Role::kAdmin,
             .summary = "The latest audit records, newest first",
             .params = {{.name = "since",
                         .format = "date-time",
                         .description = "only records at or after this time"},
                        {.name = "limit",
                         .type = "integer",
                         .description = "at most this many records (1-1000, default 100)"}},
             .response_schema = R"({"type":"object","properties":{"records":{"type":"array",)"
                                R"("items":{"$ref":"#/components/schemas/AuditRecord"}}}})",
             .handler = [&api](const HttpServerRequest& r) { return get_audit(api, r); }});
}

}  // namespace celos
