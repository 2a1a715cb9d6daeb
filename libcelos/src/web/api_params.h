// Query parameters and JSON answers shared by the API's handlers (SPEC §6, §13): every bad
// parameter is a 400 whose message names it.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>

#include <boost/json.hpp>

#include "celos/error.h"
#include "celos/http_server.h"
#include "celos/slot.h"
#include "celos/time.h"

namespace celos {

HttpServerResponse json_response(const boost::json::value& value, int status = 200);

// ErrorCode -> HTTP status: 400, 404, 502 (the outside world failed), 500 (corrupt data).
HttpServerResponse error_response(const Error& error);

// kInvalid errors naming the parameter.
Result<std::string> required_param(const HttpServerRequest& request, const std::string& name);
Result<std::optional<Time>> optional_time_param(const HttpServerRequest& request,
                                                const std::string& name);
Result<Time> required_time_param(const HttpServerRequest& request, const std::string& name);
// An integer in [min, max], or `fallback` when absent.
Result<long long> int_param(const HttpServerRequest& request, const std::string& name,
                            long long fallback, long long min, long long max);

// dryRun=true|false (default false).
Result<bool> dry_run_param(const HttpServerRequest& request);

// The id and time parameters of slot-state, trigger-status, rerun and kill.
Result<SlotId> slot_params(const HttpServerRequest& request);

// The [start, end) of /workflow-slots: end defaults to `now`, start to end - 7 days; a longer
// range or an end before the start is refused.
Result<std::pair<Time, Time>> slot_range(const HttpServerRequest& request, Time now);

// "a, b,,c" -> {"a", "b", "c"} (blanks trimmed, empty entries dropped).
std::set<std::string> split_list(std::string_view list);

}  // namespace celos
