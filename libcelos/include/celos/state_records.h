// The records a state database keeps beside slot states (SPEC §13): the maintenance mode and the
// history of a slot's changes. Plain values; their JSON forms are in celos/state_codecs.h.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "celos/error.h"
#include "celos/slot.h"
#include "celos/time.h"

namespace celos {

// Maintenance modes (SPEC §13): drain = nothing new is submitted, pause = steps do nothing.
enum class MaintenanceMode { kOff, kDrain, kPause };
std::string_view to_string(MaintenanceMode mode);
// "off", "drain", "pause"; kInvalid naming the value otherwise.
[[nodiscard]] Result<MaintenanceMode> parse_maintenance_mode(std::string_view text);

struct Maintenance {
  MaintenanceMode mode = MaintenanceMode::kOff;
  std::optional<std::string> reason;
  std::optional<Time> since;  // when the mode was entered
};

// How long a rerun marker keeps a slot in the step's view.
inline constexpr std::chrono::hours kRerunMarkerLifetime{24 * 14};

// One recorded change of a slot's state (slot history, SPEC §13/§16).
struct SlotHistoryEntry {
  Time at{};                       // the step's `now`, or the time of the API request
  std::optional<SlotStatus> from;  // nothing when no state was stored before
  SlotState to;                    // the new state (its id names the slot)
  std::string by;                  // "step", or "api:<token name or anonymous>@<client>"

  friend bool operator==(const SlotHistoryEntry&, const SlotHistoryEntry&) = default;
};

}  // namespace celos
