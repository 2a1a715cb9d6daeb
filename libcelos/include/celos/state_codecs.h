// The JSON forms of what a state database stores (SPEC §5, §13, §14): slot states as the file
// backend stores them and the API prints them, history lines, announced dataset instances, the
// maintenance mode. Parsers answer kCorrupt for bad content (the caller names the file or row).
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
// An announced dataset instance as the file backend stores it (SPEC §14): a line of
// datasets/<dataset>/<yyyy-mm-dd>.jsonl, {"time":"<instance>","announced":"<when>"} (one JSON
// line, no newline); kCorrupt without both times (a line torn by a crash: readers skip it).
struct AnnouncementLine {
  Time time;
  Time announced;
};
std::string announcement_line_to_json(const AnnouncementLine& line);
[[nodiscard]] Result<AnnouncementLine> announcement_line_from_json(std::string_view line);
// The "announced" time of the file of one instance that earlier versions wrote (its path says
// the instance), {"announced":"<when>"}; kCorrupt without it.
[[nodiscard]] Result<Time> announcement_file_from_json(std::string_view json);
// Parses a stored slot file; `id` comes from the file's path. kCorrupt on bad content.
[[nodiscard]] Result<SlotState> slot_state_from_json(const SlotId& id, std::string_view json);

}  // namespace celos
