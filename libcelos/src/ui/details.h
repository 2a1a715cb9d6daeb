// celos-ui's operator pages (SPEC §13, §16): a slot's details, loaded on click, and range reruns
// with a dry-run preview. Private to the ui folder; handler.cc routes to them.
#pragma once

#include <string>
#include <string_view>

#include "celos/http_server.h"
#include "celos/slot.h"
#include "celos/ui.h"

namespace celos {

// Bytes of each output stream shown in a slot's details.
inline constexpr int kDetailsLogTail = 8192;

// GET /slot?id=W@T: an HTML fragment (text/html) with the slot's state, external id, retry
// count, message and back-off wait, its history (celos-server's /api/v1/slot-history), its
// trigger tree (/trigger-status), the tail of its job output (/api/v1/slot-log, stdout and
// stderr) and its Hue link (when `hue_url` is set and it has an external id). Every string from
// celos-server is escaped. A part celos-server cannot answer is a note in that part; an unknown
// workflow or a time that is not a slot is a 404; celos-server unreachable is a 502.
HttpServerResponse ui_slot_details(CelosApiReader& reader, const SlotId& slot,
                                   const std::string& hue_url);

// POST /rerun?id=W&start=S&end=E[&status=…][&dryRun=true]: forwards to celos-server's
// POST /api/v1/rerun with the same range and answers its JSON and status (a 400 for an inverted
// or too large range stays a 400 with celos-server's message); 502 when it is unreachable.
HttpServerResponse ui_range_rerun(CelosApiReader& reader, const std::string& workflow, Time start,
                                  Time end, const std::string* status, bool dry_run);

// The grid's script and style for details, range selection and auto-refresh (render.cc).
std::string_view ui_details_script();
std::string_view ui_details_style();

}  // namespace celos
