// The backfill routes (issue 29; celos/backfill.h): create a plan, list them, read one with its
// progress, pause, resume and cancel. Shapes in docs/http-api.md.
#include <boost/json.hpp>
#include <fmt/format.h>

#include "api_params.h"
#include "celos/api.h"
#include "celos/backfill.h"
#include "web/operator_api.h"

namespace celos {
namespace {

namespace json = boost::json;

Result<BackfillRequest> backfill_request(const HttpServerRequest& r, const Api& api) {
  BackfillRequest b;
  auto workflows = required_param(r, "workflows");
  auto start = required_time_param(r, "start");
  auto end = required_time_param(r, "end");
  auto max_running = int_param(r, "maxRunning", kDefaultBackfillMaxRunning, 1, 100'000);
  auto dry_run = dry_run_param(r);
  for (const Error* e : {workflows ? nullptr : &workflows.error(), start ? nullptr : &start.error(),
                         end ? nullptr : &end.error(), max_running ? nullptr : &max_running.error(),
                         dry_run ? nullptr : &dry_run.error()}) {
    if (e != nullptr) return tl::unexpected(*e);
  }
  b.workflows = *workflows;
  b.start = *start;
  b.end = *end;
  b.max_running = static_cast<int>(*max_running);
  b.dry_run = *dry_run;
  if (const std::string* reprocess = query_param(r, "reprocess")) {
    auto parsed = parse_reprocess(*reprocess);
    if (!parsed) return tl::unexpected(parsed.error());
    b.reprocess = *parsed;
  }
  if (const std::string* order = query_param(r, "order")) {
    auto parsed = parse_backfill_order(*order);
    if (!parsed) return tl::unexpected(parsed.error());
    b.order = *parsed;
  }
  b.now = api.now();
  b.by = request_actor(r, r.token_name);
  b.max_slots = api.options().max_backfill_slots;
  return b;
}

json::value time_or_null(const std::optional<Time>& t) {
  if (!t) return nullptr;
  return json::string(format_time(*t));
}

json::object plan_json(const BackfillProgress& p) {
  const BackfillPlan& plan = p.plan;
  json::array workflows;
  for (const std::string& w : plan.workflows) workflows.emplace_back(w);
  json::object slots;
  for (const auto& [key, n] : p.slots) slots[key] = n;
  return json::object{{"id", plan.id},
                      {"state", to_string(plan.state)},
                      {"workflows", std::move(workflows)},
                      {"start", format_time(plan.start)},
                      {"end", format_time(plan.end)},
                      {"reprocess", to_string(plan.reprocess)},
                      {"order", to_string(plan.order)},
                      {"maxRunning", plan.max_running},
                      {"created", format_time(plan.created)},
                      {"by", plan.by},
                      {"finished", time_or_null(plan.finished)},
                      {"slots", std::move(slots)},
                      {"ratePerHour", p.rate_per_hour},
                      {"eta", time_or_null(p.eta)}};
}

HttpServerResponse create_response(const Api& api, const HttpServerRequest& r) {
  auto request = backfill_request(r, api);
  if (!request) return error_response(request.error());
  auto config = api.scheduler().config();
  auto created = Backfills(*config, api.scheduler().state_database()).create(*request);
  if (!created) return error_response(created.error());
  json::object per_workflow;
  for (const auto& [id, n] : created->workflows) per_workflow[id] = n;
  return json_response(
      json::object{{"id", created->id ? json::value(*created->id) : json::value(nullptr)},
                   {"dryRun", created->dry_run},
                   {"slots", created->slots},
                   {"workflows", std::move(per_workflow)}});
}

HttpServerResponse list_response(const Api& api) {
  auto config = api.scheduler().config();
  Backfills backfills(*config, api.scheduler().state_database());
  auto plans = backfills.list();
  if (!plans) return error_response(plans.error());
  json::array out;
  for (const BackfillPlan& plan : *plans) {
    auto progress = backfills.progress(plan, api.now());
    if (!progress) return error_response(progress.error());
    out.push_back(plan_json(*progress));
  }
  return json_response(json::object{{"backfills", std::move(out)}});
}

std::string plan_id(const HttpServerRequest& r) {
  auto it = r.path_params.find("id");
  return it == r.path_params.end() ? std::string() : it->second;
}

HttpServerResponse one_response(const Api& api, const HttpServerRequest& r) {
  auto config = api.scheduler().config();
  Backfills backfills(*config, api.scheduler().state_database());
  auto plan = backfills.get(plan_id(r));
  if (!plan) return error_response(plan.error());
  auto progress = backfills.progress(*plan, api.now());
  if (!progress) return error_response(progress.error());
  return json_response(plan_json(*progress));
}

HttpServerResponse act_response(const Api& api, const HttpServerRequest& r, BackfillAction a) {
  auto config = api.scheduler().config();
  Backfills backfills(*config, api.scheduler().state_database());
  auto acted = backfills.act(plan_id(r), a, api.now());
  if (!acted) return error_response(acted.error());
  if (acted->conflict) return json_error(409, *acted->conflict);
  std::vector<SlotChange> changes;
  for (const auto& [from, to] : acted->killed) {
    changes.push_back({from, to, api.now(), request_actor(r, r.token_name)});
  }
  api.scheduler().announce(changes);
  auto progress = backfills.progress(acted->plan, api.now());
  if (!progress) return error_response(progress.error());
  return json_response(plan_json(*progress));
}

constexpr const char* kPlanSchema =
    R"({"type":"object","properties":{"id":{"type":"string"},"state":{"type":"string",)"
    R"("enum":["running","paused","cancelled","done"]},"start":{"type":"string"},)"
    R"("end":{"type":"string"},"slots":{"type":"object"},"ratePerHour":{"type":"number"},)"
    R"("eta":{"type":["string","null"]}}})";

std::vector<RouteParam> create_params() {
  return {{.name = "workflows",
           .required = true,
           .description = "comma-separated workflow ids and globs with *"},
          {.name = "start", .format = "date-time", .required = true, .description = "inclusive"},
          {.name = "end", .format = "date-time", .required = true, .description = "exclusive"},
          {.name = "reprocess",
           .description = "missing (default), failed or all",
           .enum_values = {"missing", "failed", "all"}},
          {.name = "order",
           .description = "oldest (default) or newest first",
           .enum_values = {"oldest", "newest"}},
          {.name = "maxRunning",
           .type = "integer",
           .description = "slots of the plan in flight at once (default 10)"},
          {.name = "dryRun", .type = "boolean", .description = "true: count, create nothing"}};
}

void add_action(RouteTable& table, const Api& api, const char* name, BackfillAction action,
                const char* summary) {
  table.add({.method = "POST",
             .path = fmt::format("/backfills/{{id}}/{}", name),
             .role = Role::kOperator,
             .mutates = true,
             .summary = summary,
             .params = {{.name = "id", .in = ParamIn::kPath, .required = true}},
             .response_schema = kPlanSchema,
             .handler = [&api, action](const HttpServerRequest& r) {
               return act_response(api, r, action);
             }});
}

}  // namespace

void register_backfill_routes(RouteTable& table, const Api& api) {
  table.add({.method = "POST",
             .path = "/backfills",
             .role = Role::kOperator,
             .mutates = true,
             .summary = "Create a backfill plan (or count it: dryRun=true)",
             .params = create_params(),
             .response_schema = R"({"type":"object","properties":{"id":{"type":["string","null"]},)"
                                R"("dryRun":{"type":"boolean"},"slots":{"type":"integer"},)"
                                R"("workflows":{"type":"object"}}})",
             .handler = [&api](const HttpServerRequest& r) { return create_response(api, r); }});
  table.add({.method = "GET",
             .path = "/backfills",
             .summary = "The backfill plans with their progress",
             .response_schema = R"({"type":"object","properties":{"backfills":{"type":"array"}}})",
             .handler = [&api](const HttpServerRequest&) { return list_response(api); }});
  table.add({.method = "GET",
             .path = "/backfills/{id}",
             .summary = "One backfill plan with its progress",
             .params = {{.name = "id", .in = ParamIn::kPath, .required = true}},
             .response_schema = kPlanSchema,
             .handler = [&api](const HttpServerRequest& r) { return one_response(api, r); }});
  add_action(table, api, "pause", BackfillAction::kPause, "Pause a backfill plan");
  add_action(table, api, "resume", BackfillAction::kResume, "Resume a paused backfill plan");
  add_action(table, api, "cancel", BackfillAction::kCancel,
             "Cancel a backfill plan (running slots finish, no new ones start)");
}

}  // namespace celos
