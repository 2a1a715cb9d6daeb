// The deadline routes (issue 27, docs/deadlines.md), only under /api/v1/:
//
//   GET  /deadlines?start=T&end=T[&state=S1,S2]   slots whose deadline falls in [start, end)
//   POST /deadline?id=W&time=T&deadline=T2       moves one slot's deadline (operator, audited)
//
// and the "deadline" member /trigger-status adds to a slot's tree. What each answer holds is
// computed in model/ (Scheduler::deadlines, deadline_view); this file renders JSON.
#include <boost/json.hpp>

#include "api_params.h"
#include "celos/api.h"
#include "celos/deadline.h"
#include "operator_api.h"
#include "route_binding.h"
#include "slot_json.h"

namespace celos {
namespace {

namespace json = boost::json;

Result<std::set<DeadlineState>> state_filter(const HttpServerRequest& request) {
  std::set<DeadlineState> states;
  auto it = request.query.find("state");
  if (it == request.query.end()) return states;
  for (const std::string& name : split_list(it->second)) {
    auto s = parse_deadline_state(name);
    if (!s) return fail("parameter state: " + s.error().message, ErrorCode::kInvalid);
    states.insert(*s);
  }
  return states;
}

HttpServerResponse get_deadlines(const Api& api, const HttpServerRequest& request) {
  auto start = required_time_param(request, "start");
  if (!start) return error_response(start.error());
  auto end = required_time_param(request, "end");
  if (!end) return error_response(end.error());
  auto states = state_filter(request);
  if (!states) return error_response(states.error());
  auto list = api.scheduler().deadlines(*start, *end, api.now(), *states);
  if (!list) return error_response(list.error());
  json::array out;
  for (const DeadlineView& v : *list) {
    json::object o = deadline_json(v);
    o["workflow"] = v.slot.workflow;
    o["time"] = format_time(v.slot.time);
    out.push_back(std::move(o));
  }
  return json_response(json::object{{"deadlines", std::move(out)}});
}

HttpServerResponse post_deadline(const Api& api, const HttpServerRequest& request) {
  auto slot = slot_params(request);
  if (!slot) return error_response(slot.error());
  auto deadline = required_time_param(request, "deadline");
  if (!deadline) return error_response(deadline.error());
  auto state = api.scheduler().set_deadline(slot->workflow, slot->time, *deadline, api.now(),
                                            request_actor(request, request.token_name));
  if (!state) return error_response(state.error());
  return slot_response(*state);
}

}  // namespace

json::object deadline_json(const DeadlineView& v) {
  return json::object{
      {"deadline", format_time(v.deadline)},
      {"state", to_string(v.state)},
      {"predictedFinish",
       v.predicted_finish ? json::value(format_time(*v.predicted_finish)) : json::value()},
      {"reason", v.reason}};
}

void register_deadline_routes(RouteTable& table, const Api& api) {
  table.add({.method = "GET",
             .path = "/deadlines",
             .summary = "The slots whose deadline falls in [start, end) (at most 7 days), with "
                        "their state, predicted finish and why, ordered by deadline",
             .params = {time_route_param("start", true, "start of the range of deadlines"),
                        time_route_param("end", true, "end of the range, exclusive"),
                        {.name = "state",
                         .description = "only these states, comma-separated: PENDING, AT_RISK, "
                                        "MET, MISSED"}},
             .response_schema = R"({"type":"object","properties":{"deadlines":{"type":"array",)"
                                R"("items":{"type":"object"}}}})",
             .handler = [&api](const HttpServerRequest& r) { return get_deadlines(api, r); }});
  table.add({.method = "POST",
             .path = "/deadline",
             .role = Role::kOperator,
             .mutates = true,
             .summary = "Move one slot's deadline (stored with the slot; its state is judged "
                        "again against the new deadline)",
             .params = {{.name = "id", .required = true, .description = "the workflow's id"},
                        time_route_param("time", true, "the slot's time"),
                        time_route_param("deadline", true, "the slot's new deadline")},
             .response_schema = R"({"$ref":"#/components/schemas/Slot"})",
             .handler = [&api](const HttpServerRequest& r) { return post_deadline(api, r); }});
}

}  // namespace celos
