// The JSON of slots and trigger trees as the API prints them. /workflow-slots prints up to 168
// slots per request: they are written straight into the body rather than through a JSON DOM
// and fmt, which made the endpoint about seven times slower.
#pragma once

#include <string>
#include <utility>

#include <boost/json.hpp>

#include "celos/error.h"
#include "celos/http_server.h"
#include "celos/scheduler.h"

namespace celos {

// 2015-09-13T13:40:00.000Z, as format_time.
void append_time(std::string& out, Time t);
// {"time","status","externalID","retryCount"}
void append_slot(std::string& out, const SlotState& state);
HttpServerResponse slot_response(const SlotState& state);
boost::json::object trigger_json(const TriggerStatus& status);
// {"deadline", "state", "predictedFinish", "reason"} of one slot (deadlines_api.cc).
boost::json::object deadline_json(const DeadlineView& view);

// "info":{...},"paused":b,"slots":[...] of one workflow (without the braces), or the error that
// kept it from being read.
Result<void> append_workflow_slots(std::string& body, Scheduler& scheduler,
                                   const Workflow& workflow, std::pair<Time, Time> range);

}  // namespace celos
