// The zone options of the schedule functions (js_time_zone.cc). Internal.
#pragma once

#include <duktape.h>

#include "celos/schedule.h"
#include "celos/time_zone.h"

namespace celos::js {

struct ZoneOptions {
  TimeZone zone;
  DstRule rule;
};

// Reads `{timeZone, dst: {gap, overlap}}` at `idx` (undefined: none), falling back to the global
// CELOS_DEFAULT_TIME_ZONE, then UTC. A wrong value throws a TypeError naming `fn` and the field.
ZoneOptions read_zone_options(duk_context* ctx, duk_idx_t idx, const char* fn);

}  // namespace celos::js
