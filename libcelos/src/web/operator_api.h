// The operator endpoints of celos-server (SPEC §13, §16), as plain functions (request in,
// response out) that the route table registers:
//
//   POST /api/v1/rerun, /api/v1/kill  with start/end (range), status=S1,S2, dryRun=true
//   GET  /api/v1/slot-history?id=W&time=T
//   GET  /api/v1/slot-log?id=W&time=T[&stream=stdout|stderr][&tail=BYTES]
//
// docs/http-api.md has the shapes. Errors are JSON {"error"} with 400/404/502 like api.h's.
#pragma once

#include <optional>
#include <string>

#include "celos/http_server.h"
#include "celos/range_ops.h"
#include "celos/route_table.h"
#include "celos/scheduler.h"

namespace celos {

class Api;

// Registers the routes above on `table` (called by Api's constructor); `api` must outlive them.
void register_operator_routes(RouteTable& table, const Api& api);

// "api:<token name or anonymous>@<client address without port>" for a request.
std::string request_actor(const HttpServerRequest& request, std::string_view token_name = {});

// /api/v1/rerun and /api/v1/kill. A §6 single-slot request (`time` without dryRun=true) is
// answered as the legacy endpoint does; otherwise the range answer {"dryRun", "slots":
// [{"time","from","to"}], "skipped":[{"time","status","reason"}]} (with `time` and
// dryRun=true: the range of that one slot). Must run serialized with the other mutations.
HttpServerResponse range_operation(RangeAction action, Scheduler& scheduler,
                                   const HttpServerRequest& request, Time now,
                                   const std::string& by);

// GET /api/v1/slot-history: [{"at","from","to","externalID","retryCount","by"}], oldest first.
HttpServerResponse slot_history_response(Scheduler& scheduler, const HttpServerRequest& request);

// GET /api/v1/slot-log: text/plain; charset=utf-8, the tail of the output of the slot's latest
// command or Slurm job under `jobs_dir`; 404 for Oozie slots and slots without a job.
HttpServerResponse slot_log_response(Scheduler& scheduler, const std::string& jobs_dir,
                                     const HttpServerRequest& request);

}  // namespace celos
