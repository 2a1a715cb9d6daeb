// Range reruns and kills (SPEC §13, §16 "Range operations"): every slot of one workflow in
// [start, end), optionally only those in some statuses, as a dry run or for real.
//
// The range counts the schedule's slots in [max(start, startTime), end) before the filter; more
// than kMaxRangeSlots is an ErrorCode::kInvalid error and nothing changes. A slot with nothing
// stored has no `from` and matches WAITING. Slots the filter excludes are left out; slots that
// match but cannot move (a WAITING slot cannot be rerun, a SUCCESS slot cannot be killed, an
// external kill that failed) are listed as skipped with the reason.
//
// Run through Scheduler::range (celos/scheduler.h), serialized with the other mutations.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "celos/slot.h"
#include "celos/time.h"

namespace celos {

inline constexpr std::size_t kMaxRangeSlots = 10000;

enum class RangeAction { kRerun, kKill };

struct RangeRequest {
  std::string workflow;
  Time start{};
  Time end{};
  std::optional<std::set<SlotStatus>> statuses;  // nothing: every status
  bool dry_run = false;
  Time now{};              // the request's time (rerun markers, history `at`)
  std::string by = "api";  // who asked (history `by`)
};

struct RangeSlot {
  Time time{};
  std::optional<SlotStatus> from;  // nothing when no state was stored
  SlotStatus to = SlotStatus::kWaiting;
};

struct RangeSkip {
  Time time{};
  SlotStatus status = SlotStatus::kWaiting;
  std::string reason;
};

struct RangeResult {
  bool dry_run = false;
  std::vector<RangeSlot> slots;    // oldest first: moved (or, in a dry run, would move)
  std::vector<RangeSkip> skipped;  // oldest first
};

// "WAITING,FAILURE" -> the set; an unknown or empty name is kInvalid naming it.
[[nodiscard]] Result<std::set<SlotStatus>> parse_status_list(std::string_view text);

}  // namespace celos
