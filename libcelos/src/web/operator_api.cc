#include "web/operator_api.h"

#include <charconv>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "api_params.h"
#include "celos/api.h"
#include "celos/job_output.h"
#include "celos/slot_history.h"
#include "slot_json.h"

namespace celos {
namespace {

namespace json = boost::json;

Result<Time> request_time(const HttpServerRequest& request, const std::string& name) {
  return required_time_param(request, name);
}

Result<SlotId> slot_of(const HttpServerRequest& request) { return slot_params(request); }

HttpServerResponse json_body(const json::value& value) { return json_response(value); }

HttpServerResponse error_of(const Error& error) { return error_response(error); }

Result<std::string> required(const HttpServerRequest& request, const std::string& name) {
  return required_param(request, name);
}

json::value status_or_null(const std::optional<SlotStatus>& status) {
  if (!status) return nullptr;
  return json::string(to_string(*status));
}

json::object range_json(const RangeResult& result) {
  json::array slots, skipped;
  for (const RangeSlot& s : result.slots) {
    slots.push_back(json::object{
        {"time", format_time(s.time)}, {"from", status_or_null(s.from)}, {"to", to_string(s.to)}});
  }
  for (const RangeSkip& s : result.skipped) {
    skipped.push_back(json::object{
        {"time", format_time(s.time)}, {"status", to_string(s.status)}, {"reason", s.reason}});
  }
  return json::object{
      {"dryRun", result.dry_run}, {"slots", std::move(slots)}, {"skipped", std::move(skipped)}};
}

// The request's range: [start, end), or the one slot `time` (which must be a slot).
Result<RangeRequest> range_request(const HttpServerRequest& request, Scheduler& scheduler) {
  RangeRequest r;
  auto id = required(request, "id");
  if (!id) return tl::unexpected(id.error());
  r.workflow = *id;
  const bool has_time = query_param(request, "time") != nullptr;
  const bool has_start = query_param(request, "start") != nullptr;
  const bool has_end = query_param(request, "end") != nullptr;
  if (has_time && (has_start || has_end)) {
    return fail("parameters time and start/end: give either time or both start and end",
                ErrorCode::kInvalid);
  }
  if (has_time) {
    auto t = request_time(request, "time");
    if (!t) return tl::unexpected(t.error());
    // The single-slot form must name a slot, as §6 says (404 otherwise).
    if (auto state = scheduler.slot_history(r.workflow, *t); !state) {
      return tl::unexpected(state.error());
    }
    r.start = *t;
    r.end = *t + std::chrono::milliseconds(1);
  } else {
    if (has_start != has_end) {
      return fail(fmt::format("missing parameter: {} (a range needs both start and end)",
                              has_start ? "end" : "start"),
                  ErrorCode::kInvalid);
    }
    auto start = request_time(request, "start");
    if (!start) return tl::unexpected(start.error());
    auto end = request_time(request, "end");
    if (!end) return tl::unexpected(end.error());
    r.start = *start;
    r.end = *end;
  }
  if (const std::string* list = query_param(request, "status")) {
    auto statuses = parse_status_list(*list);
    if (!statuses) {
      return fail("parameter status: " + statuses.error().message, ErrorCode::kInvalid);
    }
    r.statuses = std::move(*statuses);
  }
  return r;
}

}  // namespace

std::string request_actor(const HttpServerRequest& request, std::string_view token_name) {
  std::string_view client = request.remote;
  // "127.0.0.1:5555", "::1:5555": the address without the port.
  if (const auto colon = client.rfind(':'); colon != std::string_view::npos) {
    client = client.substr(0, colon);
  }
  return api_actor(token_name, client);
}

HttpServerResponse range_operation(RangeAction action, Scheduler& scheduler,
                                   const HttpServerRequest& request, Time now,
                                   const std::string& by) {
  auto dry_run = dry_run_param(request);
  if (!dry_run) return error_of(dry_run.error());
  auto r = range_request(request, scheduler);
  if (!r) return error_of(r.error());
  if (query_param(request, "time") != nullptr && !*dry_run) {  // the §6 form (SPEC §16)
    auto state = action == RangeAction::kRerun ? scheduler.rerun(r->workflow, r->start, now, by)
                                               : scheduler.kill(r->workflow, r->start, now, by);
    if (!state) return error_of(state.error());
    return slot_response(*state);
  }
  r->dry_run = *dry_run;
  r->now = now;
  r->by = by;
  auto result = scheduler.range(action, *r);
  if (!result) return error_of(result.error());
  return json_body(range_json(*result));
}

HttpServerResponse slot_history_response(Scheduler& scheduler, const HttpServerRequest& request) {
  auto slot = slot_of(request);
  if (!slot) return error_of(slot.error());
  auto history = scheduler.slot_history(slot->workflow, slot->time);
  if (!history) return error_of(history.error());
  json::array out;
  for (const SlotHistoryEntry& e : *history) {
    json::object o{
        {"at", format_time(e.at)},
        {"from", status_or_null(e.from)},
        {"to", to_string(e.to.status)},
        {"externalID", e.to.external_id ? json::value(*e.to.external_id) : json::value(nullptr)},
        {"retryCount", e.to.retry_count},
        {"by", e.by}};
    if (e.to.message) o["message"] = *e.to.message;
    if (e.to.retry_at) o["retryAt"] = format_time(*e.to.retry_at);
    out.push_back(std::move(o));
  }
  return json_body(out);
}

namespace {

Result<std::size_t> tail_param(const HttpServerRequest& request) {
  const std::string* text = query_param(request, "tail");
  if (text == nullptr) return kDefaultLogTail;
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || value < 1 || value > kMaxLogTail) {
    return fail(fmt::format("parameter tail: must be a number of bytes from 1 to {}, not \"{}\"",
                            kMaxLogTail, *text),
                ErrorCode::kInvalid);
  }
  return value;
}

}  // namespace

HttpServerResponse slot_log_response(Scheduler& scheduler, const std::string& jobs_dir,
                                     const HttpServerRequest& request) {
  auto slot = slot_of(request);
  if (!slot) return error_of(slot.error());
  const std::string* stream = query_param(request, "stream");
  const std::string stream_name = stream ? *stream : "stdout";
  if (stream_name != "stdout" && stream_name != "stderr") {
    return json_error(400,
                      "parameter stream: must be stdout or stderr, not \"" + stream_name + "\"");
  }
  auto tail = tail_param(request);
  if (!tail) return error_of(tail.error());
  const WorkflowConfigPtr config = scheduler.config();
  const Workflow* wf = config->find(slot->workflow);
  if (wf == nullptr) return json_error(404, "unknown workflow: " + slot->workflow);
  auto state = scheduler.slot_state(slot->workflow, slot->time);
  if (!state) return error_of(state.error());
  if (!state->external_id) {
    return json_error(404, "slot " + to_string(*slot) + " has no job (no external id)");
  }
  // Output in celos's jobs directory (commands, Slurm), or asked from the engine (a pod's log);
  // a service that has neither answers kNotFound, which says so.
  const bool kept = wf->service->traits().keeps_job_output;
  auto output = kept ? read_job_output(jobs_dir, *slot, *state->external_id, stream_name, *tail)
                     : wf->service->job_log(*slot, *state->external_id, stream_name, *tail);
  if (!output) {
    if (kept && output.error().code == ErrorCode::kNotFound) {
      return json_error(404, fmt::format("job {} of slot {} has no {}", *state->external_id,
                                         to_string(*slot), stream_name));
    }
    return error_of(output.error());
  }
  HttpServerResponse response;
  response.content_type = "text/plain; charset=utf-8";
  response.body = std::move(*output);
  return response;
}

}  // namespace celos

namespace celos {
namespace {

RouteParam query(std::string name, std::string description, bool required = false,
                 std::string format = {}) {
  return {.name = std::move(name),
          .format = std::move(format),
          .required = required,
          .description = std::move(description)};
}

std::vector<RouteParam> range_params() {
  return {query("id", "the workflow's id", true),
          query("time", "one slot (instead of start and end)", false, "date-time"),
          query("start", "the range's start (inclusive)", false, "date-time"),
          query("end", "the range's end (exclusive)", false, "date-time"),
          query("status", "only slots in these statuses, e.g. FAILURE,WAIT_TIMEOUT"),
          {.name = "dryRun",
           .type = "boolean",
           .description = "true: change nothing, say what would change"}};
}

constexpr const char* kRangeSchema =
    R"({"type":"object","properties":{"dryRun":{"type":"boolean"},)"
    R"("slots":{"type":"array","items":{"type":"object","properties":{"time":{"type":"string"},)"
    R"("from":{"type":["string","null"]},"to":{"type":"string"}}}},)"
    R"("skipped":{"type":"array","items":{"type":"object","properties":{)"
    R"("time":{"type":"string"},"status":{"type":"string"},"reason":{"type":"string"}}}}}})";

}  // namespace

void register_operator_routes(RouteTable& table, const Api& api) {
  auto range = [&api](RangeAction action) {
    return [&api, action](const HttpServerRequest& r) {
      HttpServerResponse response =
          range_operation(action, api.scheduler(), r, api.now(), request_actor(r, r.token_name));
      // Issue 28: the workflow is stepped at once (a dry run's step finds nothing new).
      const std::string* id = query_param(r, "id");
      if (response.status == 200 && id) api.post_event(EventSource::kOperator, {*id});
      return response;
    };
  };
  table.add({.method = "POST",
             .path = "/rerun",
             .role = Role::kOperator,
             .mutates = true,
             .mount = Mount::kV1,
             .summary = "Rerun a slot, or the slots of a range (start/end, status, dryRun)",
             .params = range_params(),
             .response_schema = kRangeSchema,
             .handler = range(RangeAction::kRerun)});
  table.add({.method = "POST",
             .path = "/kill",
             .role = Role::kOperator,
             .mutates = true,
             .mount = Mount::kV1,
             .summary = "Kill a slot, or the slots of a range (start/end, status, dryRun)",
             .params = range_params(),
             .response_schema = kRangeSchema,
             .handler = range(RangeAction::kKill)});
  const std::vector<RouteParam> slot = {query("id", "the workflow's id", true),
                                        query("time", "the slot's time", true, "date-time")};
  table.add({.method = "GET",
             .path = "/slot-history",
             .mount = Mount::kV1,
             .summary = "Every state change of a slot, oldest first",
             .params = slot,
             .response_schema = R"({"type":"array","items":{"type":"object"}})",
             .handler = [&api](const HttpServerRequest& r) {
               return slot_history_response(api.scheduler(), r);
             }});
  auto log_params = slot;
  log_params.push_back({.name = "stream",
                        .description = "stdout (default) or stderr",
                        .enum_values = {"stdout", "stderr"}});
  log_params.push_back({.name = "tail",
                        .type = "integer",
                        .description = "bytes from the end, 1 to 16 MiB (default 65536)"});
  table.add({.method = "GET",
             .path = "/slot-log",
             .mount = Mount::kV1,
             .summary = "The output of the slot's latest command or Slurm job (text)",
             .params = log_params,
             .response_schema = R"({"type":"string"})",
             .content_type = "text/plain; charset=utf-8",
             .handler = [&api](const HttpServerRequest& r) {
               return slot_log_response(api.scheduler(), api.options().jobs_dir, r);
             }});
}

}  // namespace celos
