// The §6 routes: served at their legacy paths and under /api/v1/ (SPEC §13), answers exactly as
// in SPEC §6.
#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api_params.h"
#include "celos/api.h"
#include "celos/time_zone.h"
#include "route_binding.h"
#include "slot_json.h"
#include "web/operator_api.h"

namespace celos {
namespace {

namespace json = boost::json;

RouteParam id_param(std::string description = "the workflow's id") {
  return {.name = "id", .required = true, .description = std::move(description)};
}

constexpr const char* kSlotRef = R"({"$ref":"#/components/schemas/Slot"})";

HttpServerResponse post_scheduler(const Api& api, const HttpServerRequest& request) {
  auto time = optional_time_param(request, "time");
  if (!time) return error_response(time.error());
  std::optional<std::set<std::string>> ids;
  if (const std::string* list = query_param(request, "ids")) {
    ids = split_list(*list);
    if (ids->empty()) return json_error(400, "empty parameter: ids");
  }
  const Time at = time->value_or(api.now());
  const StepReport report = api.step_locked(at, ids);
  json::array errors;
  for (const auto& e : report.errors) errors.emplace_back(e);
  json::object answer{{"time", format_time(at)},     {"workflows", report.workflows},
                      {"changed", report.changed},   {"submitted", report.submitted},
                      {"errors", std::move(errors)}, {"durationMs", report.duration.count()}};
  // Only under maintenance, so that the §6 answer stays as it was.
  if (report.maintenance != MaintenanceMode::kOff)
    answer["maintenance"] = to_string(report.maintenance);
  return json_response(answer);
}

HttpServerResponse post_clear_cache(const Api& api) {
  const WorkflowConfigPtr config = api.scheduler().reload();
  json::array errors;
  for (const auto& e : config->errors) {
    errors.emplace_back(e.line > 0 ? fmt::format("{}:{}: {}", e.file, e.line, e.message)
                                   : fmt::format("{}: {}", e.file, e.message));
  }
  spdlog::info("workflows reloaded: {} workflows, {} load errors", config->workflows.size(),
               config->errors.size());
  return json_response(
      json::object{{"workflows", config->workflows.size()}, {"errors", std::move(errors)}});
}

// The id list changes only when the workflows are reloaded: its bytes are kept per loaded
// configuration (10,000 ids are 130 kB of JSON, serialized once rather than per request). Only
// the pointer swap is locked; requests copy the bytes outside the lock.
class WorkflowListCache {
 public:
  std::shared_ptr<const std::string> body(const WorkflowConfigPtr& config) {
    {
      MutexLock lock(mutex_);
      if (config == config_) return body_;
    }
    json::array ids;
    ids.reserve(config->workflows.size());
    for (const auto& [id, workflow] : config->workflows) ids.emplace_back(id);  // map: sorted
    auto body =
        std::make_shared<const std::string>(json::serialize(json::object{{"ids", std::move(ids)}}));
    MutexLock lock(mutex_);
    config_ = config;  // holds the configuration, so its address is not reused meanwhile
    body_ = body;
    return body;
  }

 private:
  Mutex mutex_;
  WorkflowConfigPtr config_ GUARDED_BY(mutex_);
  std::shared_ptr<const std::string> body_ GUARDED_BY(mutex_);
};

HttpServerResponse get_workflow_list(const Api& api) {
  static WorkflowListCache cache;  // keyed by the configuration: any number of Api objects
  HttpServerResponse response;
  response.status = 200;
  response.body = *cache.body(api.scheduler().config());
  return response;
}

HttpServerResponse get_workflow_slots(const Api& api, const HttpServerRequest& request) {
  auto id = required_param(request, "id");
  if (!id) return error_response(id.error());
  auto range = slot_range(request, api.now());
  if (!range) return error_response(range.error());
  const WorkflowConfigPtr config = api.scheduler().config();
  const Workflow* workflow = config->find(*id);
  if (workflow == nullptr) return json_error(404, "unknown workflow: " + *id);
  HttpServerResponse response;
  response.body = "{";
  if (auto ok = append_workflow_slots(response.body, api.scheduler(), *workflow, *range); !ok) {
    return error_response(ok.error());
  }
  response.body += '}';
  return response;
}

// The workflows named by `ids` in the order given, or all of them (sorted).
Result<std::vector<const Workflow*>> listed_workflows(const WorkflowConfig& config,
                                                      const std::string* ids) {
  std::vector<const Workflow*> workflows;
  if (ids == nullptr || ids->empty()) {
    for (const auto& [id, workflow] : config.workflows) workflows.push_back(&workflow);
    return workflows;
  }
  std::string_view rest = *ids;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string id(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (id.empty()) continue;
    const Workflow* workflow = config.find(id);
    if (workflow == nullptr) return fail("unknown workflow: " + id, ErrorCode::kNotFound);
    workflows.push_back(workflow);
  }
  return workflows;
}

HttpServerResponse get_multi_workflow_slots(const Api& api, const HttpServerRequest& request) {
  auto range = slot_range(request, api.now());
  if (!range) return error_response(range.error());
  const WorkflowConfigPtr config = api.scheduler().config();
  auto workflows = listed_workflows(*config, query_param(request, "ids"));
  if (!workflows) return error_response(workflows.error());
  HttpServerResponse response;
  std::string& body = response.body;
  body = R"({"workflows":[)";
  for (std::size_t i = 0; i < workflows->size(); ++i) {
    const Workflow& workflow = *(*workflows)[i];
    if (i > 0) body += ',';
    body += R"({"id":)";
    body += json::serialize(json::string_view(workflow.id));
    body += ',';
    const std::size_t mark = body.size();
    if (auto ok = append_workflow_slots(body, api.scheduler(), workflow, *range); !ok) {
      // One unreadable workflow must not blank the others: it carries its own error.
      body.resize(mark);
      body += R"("info":{"url":null,"contacts":[]},"paused":false,"slots":[],"error":)";
      body += json::serialize(json::string_view(ok.error().message));
    }
    body += '}';
  }
  body += "]}";
  return response;
}

HttpServerResponse get_slot_state(const Api& api, const HttpServerRequest& request) {
  auto slot = slot_params(request);
  if (!slot) return error_response(slot.error());
  auto state = api.scheduler().slot_state(slot->workflow, slot->time);
  if (!state) return error_response(state.error());
  auto response = slot_response(*state);
  // A schedule in local time (issue 26): the slot's zone and local time, after the stored keys.
  const Workflow* workflow = api.scheduler().config()->find(slot->workflow);
  if (workflow != nullptr && !workflow->schedule->time_zone().is_utc()) {
    const TimeZone& zone = workflow->schedule->time_zone();
    response.body.pop_back();  // the closing brace
    response.body += fmt::format(R"(,"timeZone":{},"local":"{}"}})",
                                 json::serialize(json::string_view(zone.name())),
                                 format_local_time(zone.at(slot->time)));
  }
  return response;
}

HttpServerResponse get_trigger_status(const Api& api, const HttpServerRequest& request) {
  auto slot = slot_params(request);
  if (!slot) return error_response(slot.error());
  auto status = api.scheduler().trigger_status(slot->workflow, slot->time, api.now());
  if (!status) return error_response(status.error());
  json::object tree = trigger_json(*status);
  // The slot's deadline (issue 27), beside the trigger's tree.
  auto deadline = api.scheduler().deadline_view(slot->workflow, slot->time, api.now());
  if (deadline && *deadline) tree["deadline"] = deadline_json(**deadline);
  // While the slot's data check backs off (issue 28): when its data is checked next.
  if (auto next = api.scheduler().next_data_check({slot->workflow, slot->time}, api.now())) {
    tree["nextCheckAt"] = format_time(*next);
  }
  return json_response(tree);
}

HttpServerResponse post_rerun(const Api& api, const HttpServerRequest& request) {
  auto slot = slot_params(request);
  if (!slot) return error_response(slot.error());
  auto state = api.scheduler().rerun(slot->workflow, slot->time, api.now(),
                                     request_actor(request, request.token_name));
  if (!state) return error_response(state.error());
  api.post_event(EventSource::kOperator, {slot->workflow});  // issue 28
  return slot_response(*state);
}

HttpServerResponse post_kill(const Api& api, const HttpServerRequest& request) {
  auto slot = slot_params(request);
  if (!slot) return error_response(slot.error());
  auto state = api.scheduler().kill(slot->workflow, slot->time, api.now(),
                                    request_actor(request, request.token_name));
  if (!state) return error_response(state.error());
  api.post_event(EventSource::kOperator, {slot->workflow});  // issue 28
  return slot_response(*state);
}

HttpServerResponse post_pause(const Api& api, const HttpServerRequest& request) {
  auto id = required_param(request, "id");
  if (!id) return error_response(id.error());
  auto paused_text = required_param(request, "paused");
  if (!paused_text) return error_response(paused_text.error());
  if (*paused_text != "true" && *paused_text != "false") {
    return json_error(400, "parameter paused: must be true or false, not \"" + *paused_text + "\"");
  }
  const bool paused = *paused_text == "true";
  if (api.scheduler().config()->find(*id) == nullptr) {
    return json_error(404, "unknown workflow: " + *id);
  }
  auto done = api.scheduler().pause(*id, paused);
  if (!done) return error_response(done.error());
  return json_response(json::object{{"id", *id}, {"paused", paused}});
}

void register_mutations(RouteTable& table, const Api& api) {
  const auto slot_time = time_route_param("time", true, "the slot's time (a slot of the schedule)");
  table.add({.method = "POST",
             .path = "/scheduler",
             .role = Role::kOperator,
             .mutates = true,
             .mount = Mount::kLegacyAndV1,
             .summary = "One scheduler step at `time` for all or the listed workflows",
             .params = {time_route_param("time", false, "the step's time (default: now)"),
                        {.name = "ids", .description = "comma-separated workflow ids"}},
             .response_schema = R"({"$ref":"#/components/schemas/StepReport"})",
             .handler = bind_api(api, post_scheduler)});
  table.add({.method = "POST",
             .path = "/clear-cache",
             .role = Role::kOperator,
             .mutates = true,
             .mount = Mount::kLegacyAndV1,
             .summary = "Reload the workflow files now",
             .response_schema = R"({"type":"object","properties":{"workflows":{"type":"integer"},)"
                                R"("errors":{"type":"array","items":{"type":"string"}}}})",
             .handler = bind_api(api, post_clear_cache)});
  // Legacy path only: /api/v1/rerun and /api/v1/kill also take ranges (operator_api.cc).
  table.add({.method = "POST",
             .path = "/rerun",
             .role = Role::kOperator,
             .mutates = true,
             .mount = Mount::kRoot,
             .summary = "Rerun a slot (from a final state)",
             .params = {id_param(), slot_time},
             .response_schema = kSlotRef,
             .handler = bind_api(api, post_rerun)});
  table.add({.method = "POST",
             .path = "/kill",
             .role = Role::kOperator,
             .mutates = true,
             .mount = Mount::kRoot,
             .summary = "Kill a slot (and its external job)",
             .params = {id_param(), slot_time},
             .response_schema = kSlotRef,
             .handler = bind_api(api, post_kill)});
  table.add({.method = "POST",
             .path = "/pause",
             .role = Role::kOperator,
             .mutates = true,
             .mount = Mount::kLegacyAndV1,
             .summary = "Pause or unpause a workflow",
             .params = {id_param(),
                        {.name = "paused",
                         .type = "boolean",
                         .required = true,
                         .description = "true to pause, false to unpause"}},
             .response_schema = R"({"type":"object","properties":{"id":{"type":"string"},)"
                                R"("paused":{"type":"boolean"}}})",
             .handler = bind_api(api, post_pause)});
}

void register_reads(RouteTable& table, const Api& api) {
  const auto range = std::vector<RouteParam>{
      time_route_param("start", false, "start of the range (default: end - 7 days)"),
      time_route_param("end", false, "end of the range, exclusive (default: now)")};
  const auto slot =
      std::vector<RouteParam>{id_param(), time_route_param("time", true, "the slot's time")};
  auto slots_params = range;
  slots_params.insert(slots_params.begin(), id_param());
  auto multi_params = range;
  multi_params.insert(
      multi_params.begin(),
      {.name = "ids", .description = "comma-separated workflow ids (default: all)"});
  table.add({.method = "GET",
             .path = "/workflow-list",
             .mount = Mount::kLegacyAndV1,
             .summary = "The ids of the loaded workflows, sorted",
             .response_schema = R"({"type":"object","properties":{"ids":{"type":"array",)"
                                R"("items":{"type":"string"}}}})",
             .handler = bind_api(api, get_workflow_list)});
  table.add({.method = "GET",
             .path = "/workflow-slots",
             .mount = Mount::kLegacyAndV1,
             .summary = "A workflow's info, pause flag and slots in a range, newest first",
             .params = slots_params,
             .response_schema = R"({"$ref":"#/components/schemas/WorkflowSlots"})",
             .handler = bind_api(api, get_workflow_slots)});
  table.add({.method = "GET",
             .path = "/multi-workflow-slots",
             .mount = Mount::kLegacyAndV1,
             .summary = "The slots of many workflows in one answer (used by celos-ui)",
             .params = multi_params,
             .response_schema = R"({"type":"object","properties":{"workflows":{"type":"array",)"
                                R"("items":{"$ref":"#/components/schemas/WorkflowSlots"}}}})",
             .handler = bind_api(api, get_multi_workflow_slots)});
  table.add({.method = "GET",
             .path = "/slot-state",
             .mount = Mount::kLegacyAndV1,
             .summary = "One stored slot (404 if nothing is stored)",
             .params = slot,
             .response_schema = kSlotRef,
             .handler = bind_api(api, get_slot_state)});
  table.add({.method = "GET",
             .path = "/trigger-status",
             .mount = Mount::kLegacyAndV1,
             .summary = "The trigger's status tree for a slot",
             .params = slot,
             .response_schema = R"({"$ref":"#/components/schemas/TriggerStatus"})",
             .handler = bind_api(api, get_trigger_status)});
  table.add({.method = "GET",
             .path = "/version",
             .mount = Mount::kLegacyAndV1,
             .summary = "The server's version and the tzdata version its time zones use",
             .response_schema = R"({"type":"object","properties":{"version":{"type":"string"},)"
                                R"("tzdata":{"type":"string"}}})",
             .while_loading = true,
             .handler = [&api](const HttpServerRequest&) {
               return json_response(
                   json::object{{"version", api.options().version}, {"tzdata", tzdata_version()}});
             }});
}

}  // namespace

void register_core_routes(RouteTable& table, const Api& api) {
  register_mutations(table, api);
  register_reads(table, api);
}

}  // namespace celos
