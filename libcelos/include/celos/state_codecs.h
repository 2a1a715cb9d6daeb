// The JSON forms of what a state database stores (SPEC §5, §13): slot states as the file backend
// stores them and the API prints them, history lines, the maintenance mode. Parsers answer
// kCorrupt for bad content (the caller names the file or row).
#pragma once

#include <string>
#include <string_view>

#include "celos/error.h"
#include "celos/slot.h"
#include "celos/state_records.h"

namespace celos {

// {"mode","reason","since"} as stored; kCorrupt on bad content.
std::string maintenance_to_json(const Maintenance& maintenance);
[[nodiscard]] Result<Maintenance> maintenance_from_json(std::string_view json);

// JSON of a slot state as stored and as the API prints it (without "time" when !with_time).
std::string slot_state_to_json(const SlotState& state, bool with_time = true);
// One line of the history file (JSON, no newline) and back. A line that does not parse is
// kCorrupt (a torn last line after a crash: readers skip it).
std::string history_entry_to_json(const SlotHistoryEntry& entry);
[[nodiscard]] Result<SlotHistoryEntry> history_entry_from_json(std::string_view workflow,
                                                               std::string_view line);
// Parses a stored slot file; `id` comes from the file's path. kCorrupt on bad content.
[[nodiscard]] Result<SlotState> slot_state_from_json(const SlotId& id, std::string_view json);

}  // namespace celos
