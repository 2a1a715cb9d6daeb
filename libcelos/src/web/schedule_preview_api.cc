// GET /api/v1/schedule-preview?id=W&start=T&end=T (issue 26, docs/http-api.md): a workflow's
// slot times in a range, each with its local time in the schedule's zone and the daylight-saving
// rule that produced or moved it, plus the schedule's lint warnings for that range. What the
// slots are is computed in model/ (preview_schedule); this file renders JSON.
#include <fmt/format.h>

#include "api_params.h"
#include "celos/api.h"
#include "celos/schedule.h"
#include "celos/time_zone.h"

namespace celos {
namespace {

namespace json = boost::json;

constexpr auto kDefaultPreview = std::chrono::days(7);

HttpServerResponse get_schedule_preview(const Api& api, const HttpServerRequest& request) {
  auto id = required_param(request, "id");
  if (!id) return error_response(id.error());
  auto start_param = optional_time_param(request, "start");
  if (!start_param) return error_response(start_param.error());
  auto end_param = optional_time_param(request, "end");
  if (!end_param) return error_response(end_param.error());
  const Time start = start_param->value_or(api.now());
  const Time end = end_param->value_or(start + kDefaultPreview);
  if (end < start) return json_error(400, "end is before start");

  const WorkflowConfigPtr config = api.scheduler().config();
  const Workflow* workflow = config->find(*id);
  if (workflow == nullptr) return json_error(404, "unknown workflow: " + *id);
  const Schedule& schedule = *workflow->schedule;
  auto slots = preview_schedule(schedule, start, end, config->schedule_context());
  if (!slots) return error_response(slots.error());

  const TimeZone& zone = schedule.time_zone();
  json::array list;
  list.reserve(slots->size());
  for (const ScheduledTime& s : *slots) {
    const auto rule = to_string(s.rule);
    list.push_back(json::object{{"time", format_time(s.time)},
                                {"local", format_local_time(zone.at(s.time))},
                                {"rule", rule.empty() ? json::value(nullptr) : json::value(rule)}});
  }
  json::array warnings;
  for (auto& w : schedule.warnings(start, end)) warnings.emplace_back(std::move(w));
  return json_response(json::object{{"id", *id},
                                    {"timeZone", zone.name()},
                                    {"tzdata", tzdata_version()},
                                    {"slots", std::move(list)},
                                    {"warnings", std::move(warnings)}});
}

}  // namespace

void register_schedule_preview_routes(RouteTable& table, const Api& api) {
  table.add({.method = "GET",
             .path = "/schedule-preview",
             .mount = Mount::kV1,
             .summary = "A workflow's slot times in a range with their local times and DST rules "
                        "(at most 10,000; a larger range is a 400)",
             .params = {{.name = "id", .required = true, .description = "the workflow's id"},
                        {.name = "start",
                         .format = "date-time",
                         .description = "start of the range (default: now)"},
                        {.name = "end",
                         .format = "date-time",
                         .description = "end of the range, exclusive (default: start + 7 days)"}},
             .response_schema = R"({"type":"object","properties":{"id":{"type":"string"},)"
                                R"("timeZone":{"type":"string"},"tzdata":{"type":"string"},)"
                                R"("slots":{"type":"array","items":{"type":"object","properties":{)"
                                R"("time":{"type":"string"},"local":{"type":"string"},)"
                                R"("rule":{"type":"string","nullable":true}}}},)"
                                R"("warnings":{"type":"array","items":{"type":"string"}}}})",
             .handler = [&api](const HttpServerRequest& request) {
               return get_schedule_preview(api, request);
             }});
}

}  // namespace celos
