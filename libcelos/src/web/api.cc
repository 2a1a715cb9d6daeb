#include "celos/api.h"
#include "celos/operator_api.h"

#include <algorithm>
#include <exception>
#include <map>
#include <string_view>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace celos {
namespace {

namespace json = boost::json;

using Handler = HttpServerResponse (Api::*)(const HttpServerRequest&) const;

struct Route {
  const char* method;
  Handler handler;
  bool mutates;
};

HttpServerResponse slot_response(const SlotState& state);

HttpServerResponse json_response(const json::value& value, int status = 200) {
  HttpServerResponse response;
  response.status = status;
  response.body = json::serialize(value);
  return response;
}

// ErrorCode -> HTTP status. A failing external service or file system is not our bug: 502.
HttpServerResponse error_response(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalid: return json_error(400, error.message);
    case ErrorCode::kNotFound: return json_error(404, error.message);
    case ErrorCode::kFailed: return json_error(502, error.message);
    case ErrorCode::kCorrupt: return json_error(500, error.message);
  }
  return json_error(500, error.message);
}

Result<std::string> required_param(const HttpServerRequest& request, const std::string& name) {
  const std::string* value = query_param(request, name);
  if (value == nullptr) return fail("missing parameter: " + name, ErrorCode::kInvalid);
  if (value->empty()) return fail("empty parameter: " + name, ErrorCode::kInvalid);
  return *value;
}

Result<std::optional<Time>> optional_time_param(const HttpServerRequest& request,
                                                const std::string& name) {
  const std::string* value = query_param(request, name);
  if (value == nullptr) return std::optional<Time>{};
  auto time = parse_time(*value);
  if (!time) return fail("parameter " + name + ": " + time.error().message, ErrorCode::kInvalid);
  return std::optional<Time>{*time};
}

Result<Time> required_time_param(const HttpServerRequest& request, const std::string& name) {
  if (query_param(request, name) == nullptr) {
    return fail("missing parameter: " + name, ErrorCode::kInvalid);
  }
  return optional_time_param(request, name).map([](auto t) { return *t; });
}

// The id and time parameters shared by slot-state, trigger-status, rerun and kill.
Result<SlotId> slot_params(const HttpServerRequest& request) {
  auto id = required_param(request, "id");
  if (!id) return tl::unexpected(id.error());
  auto time = required_time_param(request, "time");
  if (!time) return tl::unexpected(time.error());
  return SlotId{*id, *time};
}

// /workflow-slots prints up to 168 slots per request: written straight into the body rather
// than through a JSON DOM and fmt, which made the endpoint about seven times slower.
void append_digits(std::string& out, int value, int width) {
  char digits[8];
  for (int i = width - 1; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  out.append(digits, static_cast<std::size_t>(width));
}

void append_time(std::string& out, Time t) {  // 2015-09-13T13:40:00.000Z, as format_time
  const CivilTime c = to_civil(t);
  append_digits(out, c.year, 4);
  out += '-';
  append_digits(out, c.month, 2);
  out += '-';
  append_digits(out, c.day, 2);
  out += 'T';
  append_digits(out, c.hour, 2);
  out += ':';
  append_digits(out, c.minute, 2);
  out += ':';
  append_digits(out, c.second, 2);
  out += '.';
  append_digits(out, c.millisecond, 3);
  out += 'Z';
}

void append_slot(std::string& out, const SlotState& state) {
  out += R"({"time":")";
  append_time(out, state.id.time);
  out += R"(","status":")";
  out += to_string(state.status);
  out += R"(","externalID":)";
  out += state.external_id ? json::serialize(json::string_view(*state.external_id)) : "null";
  out += R"(,"retryCount":)";
  out += std::to_string(state.retry_count);
  out += '}';
}

HttpServerResponse slot_response(const SlotState& state) {
  HttpServerResponse response;
  append_slot(response.body, state);
  return response;
}

json::object trigger_json(const TriggerStatus& status) {
  json::array subs;
  for (const auto& sub : status.sub_statuses) subs.push_back(trigger_json(sub));
  return json::object{{"type", status.type},
                      {"ready", status.ready},
                      {"description", status.description},
                      {"subStatuses", std::move(subs)}};
}

}  // namespace

struct ApiRoutes {
  static const std::map<std::string, Route, std::less<>>& table();
};

const std::map<std::string, Route, std::less<>>& ApiRoutes::table() {
  static const std::map<std::string, Route, std::less<>> table{
      {"/scheduler", {"POST", &Api::post_scheduler, true}},
      {"/clear-cache", {"POST", &Api::post_clear_cache, true}},
      {"/workflow-list", {"GET", &Api::get_workflow_list, false}},
      {"/workflow-slots", {"GET", &Api::get_workflow_slots, false}},
      {"/multi-workflow-slots", {"GET", &Api::get_multi_workflow_slots, false}},
      {"/slot-state", {"GET", &Api::get_slot_state, false}},
      {"/trigger-status", {"GET", &Api::get_trigger_status, false}},
      {"/rerun", {"POST", &Api::post_rerun, true}},
      {"/kill", {"POST", &Api::post_kill, true}},
      {"/pause", {"POST", &Api::post_pause, true}},
      {"/version", {"GET", &Api::get_version, false}},
      {"/api/v1/rerun", {"POST", &Api::post_rerun_v1, true}},
      {"/api/v1/kill", {"POST", &Api::post_kill_v1, true}},
      {"/api/v1/slot-history", {"GET", &Api::get_slot_history, false}},
      {"/api/v1/slot-log", {"GET", &Api::get_slot_log, false}},
  };
  return table;
}

namespace {

std::string_view trim_slash(std::string_view path) {
  // `/workflow-list/` is the same endpoint as `/workflow-list`.
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path;
}

}  // namespace

Api::Api(Scheduler& scheduler, ApiOptions options)
    : scheduler_(scheduler), options_(std::move(options)) {}

Time Api::now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::time_point_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now());
}

bool Api::is_mutation(const HttpServerRequest& request) {
  const auto it = ApiRoutes::table().find(trim_slash(request.path));
  return it != ApiRoutes::table().end() && it->second.mutates && request.method == it->second.method;
}

HttpServerResponse Api::handle(const HttpServerRequest& request) const {
  try {
    return route(request);
  } catch (const std::exception& e) {
    spdlog::error("{} {} failed: {}", request.method, request.target, e.what());
    return json_error(500, std::string("internal error: ") + e.what());
  } catch (...) {
    spdlog::error("{} {} failed with an unknown exception", request.method, request.target);
    return json_error(500, "internal error");
  }
}

HttpServerResponse Api::route(const HttpServerRequest& request) const {
  const auto it = ApiRoutes::table().find(trim_slash(request.path));
  if (it == ApiRoutes::table().end()) return json_error(404, "no such endpoint: " + request.path);
  const Route& route = it->second;
  if (request.method != route.method) {
    auto response = json_error(
        405, fmt::format("method {} not allowed on {}: use {}", request.method, it->first,
                         route.method));
    response.headers["Allow"] = route.method;
    return response;
  }
  if (!route.mutates) return (this->*route.handler)(request);
  std::lock_guard lock(mutation_mutex_);
  return (this->*route.handler)(request);
}

StepReport Api::step(Time now, const std::optional<std::set<std::string>>& ids) const {
  std::lock_guard lock(mutation_mutex_);
  return run_step(now, ids);
}

StepReport Api::run_step(Time now, const std::optional<std::set<std::string>>& ids) const {
  // The scheduler logs the step's start, end and slot changes itself.
  const auto started = std::chrono::steady_clock::now();
  StepReport report = scheduler_.step(now, ids);
  if (report.duration.count() == 0) {
    report.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
  }
  return report;
}

// Runs with mutation_mutex_ held (see route()).
HttpServerResponse Api::post_scheduler(const HttpServerRequest& request) const {
  auto time = optional_time_param(request, "time");
  if (!time) return error_response(time.error());
  std::optional<std::set<std::string>> ids;
  if (const std::string* list = query_param(request, "ids")) {
    ids.emplace();
    std::string_view rest = *list;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      std::string_view id = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      while (!id.empty() && id.front() == ' ') id.remove_prefix(1);
      while (!id.empty() && id.back() == ' ') id.remove_suffix(1);
      if (!id.empty()) ids->emplace(id);
    }
    if (ids->empty()) return json_error(400, "empty parameter: ids");
  }
  const Time at = time->value_or(now());
  const StepReport report = run_step(at, ids);
  json::array errors;
  for (const auto& e : report.errors) errors.emplace_back(e);
  return json_response(json::object{{"time", format_time(at)},
                                    {"workflows", report.workflows},
                                    {"changed", report.changed},
                                    {"submitted", report.submitted},
                                    {"errors", std::move(errors)},
                                    {"durationMs", report.duration.count()}});
}

HttpServerResponse Api::post_clear_cache(const HttpServerRequest&) const {
  const WorkflowConfigPtr config = scheduler_.reload();
  json::array errors;
  for (const auto& e : config->errors) {
    errors.emplace_back(e.line > 0 ? fmt::format("{}:{}: {}", e.file, e.line, e.message)
                                   : fmt::format("{}: {}", e.file, e.message));
  }
  spdlog::info("workflows reloaded: {} workflows, {} load errors", config->workflows.size(),
               config->errors.size());
  return json_response(json::object{{"workflows", config->workflows.size()},
                                    {"errors", std::move(errors)}});
}

HttpServerResponse Api::get_workflow_list(const HttpServerRequest&) const {
  const WorkflowConfigPtr config = scheduler_.config();
  json::array ids;
  ids.reserve(config->workflows.size());
  for (const auto& [id, workflow] : config->workflows) ids.emplace_back(id);  // map: sorted
  return json_response(json::object{{"ids", std::move(ids)}});
}

namespace {

// The [start, end) of /workflow-slots and /multi-workflow-slots: end defaults to now, start to
// end - 7 days, and a longer range is refused.
Result<std::pair<Time, Time>> slot_range(const HttpServerRequest& request, Time now) {
  auto start = optional_time_param(request, "start");
  if (!start) return tl::unexpected(start.error());
  auto end = optional_time_param(request, "end");
  if (!end) return tl::unexpected(end.error());
  const Time to = end->value_or(now);
  const Time from = start->value_or(to - kSlidingWindow);
  if (from > to) return fail("parameter start: must not be after end", ErrorCode::kInvalid);
  if (to - from > kSlidingWindow) {
    return fail("parameters start and end: at most 7 days per request", ErrorCode::kInvalid);
  }
  return std::make_pair(from, to);
}

// {"info":{...},"paused":b,"slots":[...]} of one workflow, or the error that kept it from
// being read (as a Result, for /workflow-slots to answer with the right status).
Result<void> append_workflow_slots(std::string& body, Scheduler& scheduler,
                                   const Workflow& workflow, std::pair<Time, Time> range) {
  auto slots = scheduler.workflow_slots(workflow.id, range.first, range.second);
  if (!slots) return tl::unexpected(slots.error());
  auto paused = scheduler.is_paused(workflow.id);
  if (!paused) return tl::unexpected(paused.error());
  json::array contacts;
  for (const auto& c : workflow.contacts) {
    contacts.push_back(json::object{{"name", c.name}, {"email", c.email}});
  }
  json::object info{{"url", workflow.url ? json::value(*workflow.url) : json::value(nullptr)},
                    {"contacts", std::move(contacts)}};
  body.reserve(body.size() + 200 + slots->size() * 100);
  body += R"("info":)";
  body += json::serialize(info);
  body += *paused ? R"(,"paused":true,"slots":[)" : R"(,"paused":false,"slots":[)";
  for (std::size_t i = 0; i < slots->size(); ++i) {
    if (i > 0) body += ',';
    append_slot(body, (*slots)[i]);
  }
  body += ']';
  return {};
}

}  // namespace

HttpServerResponse Api::get_workflow_slots(const HttpServerRequest& request) const {
  auto id = required_param(request, "id");
  if (!id) return error_response(id.error());
  auto range = slot_range(request, now());
  if (!range) return error_response(range.error());
  const WorkflowConfigPtr config = scheduler_.config();
  const Workflow* workflow = config->find(*id);
  if (workflow == nullptr) return json_error(404, "unknown workflow: " + *id);
  HttpServerResponse response;
  response.body = "{";
  if (auto ok = append_workflow_slots(response.body, scheduler_, *workflow, *range); !ok) {
    return error_response(ok.error());
  }
  response.body += '}';
  return response;
}

HttpServerResponse Api::get_multi_workflow_slots(const HttpServerRequest& request) const {
  auto range = slot_range(request, now());
  if (!range) return error_response(range.error());
  const WorkflowConfigPtr config = scheduler_.config();
  std::vector<const Workflow*> workflows;
  if (const std::string* ids = query_param(request, "ids"); ids != nullptr && !ids->empty()) {
    std::string_view rest = *ids;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const std::string id(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      if (id.empty()) continue;
      const Workflow* workflow = config->find(id);
      if (workflow == nullptr) return json_error(404, "unknown workflow: " + id);
      workflows.push_back(workflow);
    }
  } else {
    for (const auto& [id, workflow] : config->workflows) workflows.push_back(&workflow);
  }
  HttpServerResponse response;
  std::string& body = response.body;
  body = R"({"workflows":[)";
  for (std::size_t i = 0; i < workflows.size(); ++i) {
    if (i > 0) body += ',';
    body += R"({"id":)";
    body += json::serialize(json::string_view(workflows[i]->id));
    body += ',';
    const std::size_t mark = body.size();
    if (auto ok = append_workflow_slots(body, scheduler_, *workflows[i], *range); !ok) {
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

HttpServerResponse Api::get_slot_state(const HttpServerRequest& request) const {
  auto slot = slot_params(request);
  if (!slot) return error_response(slot.error());
  auto state = scheduler_.slot_state(slot->workflow, slot->time);
  if (!state) return error_response(state.error());
  return slot_response(*state);
}

HttpServerResponse Api::get_trigger_status(const HttpServerRequest& request) const {
  auto slot = slot_params(request);
  if (!slot) return error_response(slot.error());
  auto status = scheduler_.trigger_status(slot->workflow, slot->time, now());
  if (!status) return error_response(status.error());
  return json_response(trigger_json(*status));
}

HttpServerResponse Api::post_rerun(const HttpServerRequest& request) const {
  auto slot = slot_params(request);
  if (!slot) return error_response(slot.error());
  auto state = scheduler_.rerun(slot->workflow, slot->time, now(), request_actor(request));
  if (!state) return error_response(state.error());
  return slot_response(*state);
}

HttpServerResponse Api::post_kill(const HttpServerRequest& request) const {
  auto slot = slot_params(request);
  if (!slot) return error_response(slot.error());
  auto state = scheduler_.kill(slot->workflow, slot->time, now(), request_actor(request));
  if (!state) return error_response(state.error());
  return slot_response(*state);
}

HttpServerResponse Api::post_pause(const HttpServerRequest& request) const {
  auto id = required_param(request, "id");
  if (!id) return error_response(id.error());
  auto paused_text = required_param(request, "paused");
  if (!paused_text) return error_response(paused_text.error());
  if (*paused_text != "true" && *paused_text != "false") {
    return json_error(400, "parameter paused: must be true or false, not \"" + *paused_text + "\"");
  }
  const bool paused = *paused_text == "true";
  if (scheduler_.config()->find(*id) == nullptr) {
    return json_error(404, "unknown workflow: " + *id);
  }
  auto done = scheduler_.pause(*id, paused);
  if (!done) return error_response(done.error());
  return json_response(json::object{{"id", *id}, {"paused", paused}});
}

HttpServerResponse Api::post_rerun_v1(const HttpServerRequest& request) const {
  auto range = range_operation(RangeAction::kRerun, scheduler_, request, now(),
                               request_actor(request));
  return range ? *range : post_rerun(request);
}

HttpServerResponse Api::post_kill_v1(const HttpServerRequest& request) const {
  auto range =
      range_operation(RangeAction::kKill, scheduler_, request, now(), request_actor(request));
  return range ? *range : post_kill(request);
}

HttpServerResponse Api::get_slot_history(const HttpServerRequest& request) const {
  return slot_history_response(scheduler_, request);
}

HttpServerResponse Api::get_slot_log(const HttpServerRequest& request) const {
  return slot_log_response(scheduler_, options_.jobs_dir, request);
}

HttpServerResponse Api::get_version(const HttpServerRequest&) const {
  return json_response(json::object{{"version", options_.version}});
}

}  // namespace celos
