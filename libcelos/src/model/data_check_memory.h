// What the data checks of steps remember from one step to the next (issue 28), in memory only
// (a restart checks everything at its first step): the back-off of WAITING slots whose data is
// missing on a file system of round trips (celos/scheduler.h's DataCheckBackoff), and the
// directories too big to be listed. The scheduler owns one; steps update it on their own thread,
// and /trigger-status reads it from request threads, hence the lock. Internal to model/.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "celos/mutex.h"
#include "celos/scheduler.h"
#include "celos/slot.h"
#include "celos/time.h"

namespace celos::detail {

// A directory whose listing held more entries than this is not listed again for
// kTooBigForgotten: its waiting paths are checked one by one, as without listings.
inline constexpr std::size_t kMaxListedEntries = 5000;
inline constexpr auto kTooBigForgotten = std::chrono::hours(1);

// What became of one WAITING slot's data check in a step.
struct CheckOutcome {
  enum class Kind {
    kKept,     // not checked (backing off) or the check failed: its back-off stays as it was
    kMissing,  // checked, not ready, and it asked a file system that lists: back off further
    kOther,    // ready, or it asked no such file system: no back-off
  };
  Time slot{};
  Kind kind = Kind::kOther;
  int paths = 0;  // kMissing: the paths it asked there
};

class DataCheckMemory {
 public:
  void configure(DataCheckBackoff backoff) EXCLUDES(mutex_);
  bool backs_off() const EXCLUDES(mutex_);

  // Nothing when the slot's check is due at `now`; else how many paths its last check asked
  // (the checks this step saves).
  std::optional<int> deferred(const SlotId& slot, Time now) const EXCLUDES(mutex_);
  // When the slot's check is due next, while it is not due at `now`.
  std::optional<Time> next_check(const SlotId& slot, Time now) const EXCLUDES(mutex_);
  // A step's outcomes of one workflow's WAITING slots (every one of them): replaces what was
  // kept for the workflow, so that slots no longer waiting are forgotten.
  void update(const std::string& workflow, const std::vector<CheckOutcome>& outcomes, Time now)
      EXCLUDES(mutex_);
  // The workflows' slots are checked at the next step (an event, a rerun).
  void reset(const std::set<std::string>& workflows) EXCLUDES(mutex_);
  // Forgets the workflows not in `current` (removed from the configuration).
  void retain(const std::set<std::string>& current) EXCLUDES(mutex_);

  bool too_big(const std::string& uri, const std::string& dir, Time now) const EXCLUDES(mutex_);
  void note_too_big(const std::string& uri, const std::string& dir, Time now) EXCLUDES(mutex_);

 private:
  struct Entry {
    int misses = 0;  // negative checks in a row
    Time next{};     // due from (next - half a step) on
    int paths = 0;
  };
  bool due(const Entry& e, Time now) const REQUIRES(mutex_);

  mutable Mutex mutex_;
  DataCheckBackoff backoff_ GUARDED_BY(mutex_);
  std::map<std::string, std::map<Time, Entry>> slots_ GUARDED_BY(mutex_);
  std::map<std::pair<std::string, std::string>, Time> too_big_ GUARDED_BY(mutex_);
};

}  // namespace celos::detail
