// Slot history (SPEC §13): a SchedulerListener that records every committed slot change in the
// state database (StateDatabase::append_history), with when (`at`) and by whom (`by`).
//
// A step's changes are buffered and appended once, at the end of the step (one append per
// workflow and slot day, not one file per change); changes made through the API are appended at
// once. A failed append is logged and never fails the step: the slot states are already stored.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "celos/clock.h"
#include "celos/scheduler.h"
#include "celos/state_db.h"

namespace celos {

// `db` must outlive the recorder. Thread-safe.
std::unique_ptr<SchedulerListener> make_history_recorder(StateDatabase& db);

// Slot history retention (--history-retention-days): prunes the history of the slots whose time
// and changes are all older than `retention` at `now` (StateDatabase::prune_history), and logs
// how many changes went, or why none could. celos-server's leader calls it once an hour, off the
// serving and stepping threads. `clock` measures how long the prune took.
void prune_slot_history(StateDatabase& db, Time now, std::chrono::days retention,
                        Clock& clock = system_clock());

// The `by` of a change made through the API: "api:<token name or anonymous>@<client address>".
std::string api_actor(std::string_view token_name, std::string_view client);

}  // namespace celos
