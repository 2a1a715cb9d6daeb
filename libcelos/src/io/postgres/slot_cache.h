// The leader's in-memory copy of the state a step reads (slots from a floor time on, rerun
// markers, pause flags), so that a steady step of 1,000 workflows costs no database round trip
// (issue 13). Private to libcelos' io/ folder.
//
// Valid only while this process is the only writer: the fenced leader of one epoch (a node that
// lost the lease can no longer write, and a new leader has a new epoch) or an unfenced database
// used by one process. Every access names its `owner` (the epoch, 0 when unfenced, nothing for a
// standby); another owner than the cache's empties it first, and no owner bypasses it. Writes of
// this process are applied after they commit (`put`, `set_paused`, `forget_reruns`); a write
// whose outcome is unknown must `clear()` it. A `fill` whose rows were read before a write was
// applied is dropped (generation check), so that a fill never installs rows older than a write.
//
// Thread-safe. Reads answer nothing (std::nullopt) when the cache cannot answer: the caller asks
// the database.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "celos/mutex.h"
#include "celos/slot.h"
#include "celos/time.h"

namespace celos {

class SlotCache {
 public:
  using Owner = std::optional<std::int64_t>;
  struct Marker {
    SlotId slot;
    Time rerun_time{};
    std::optional<SlotStatus> status;  // the marked slot's stored status, if any
  };

  // Stored states of `workflow` with start <= time < end, when loaded from `start` on.
  std::optional<std::vector<SlotState>> slots(Owner owner, std::string_view workflow, Time start,
                                              Time end);
  // One slot's stored state (nullopt inside means nothing stored), when its time is loaded.
  std::optional<std::optional<SlotState>> slot(Owner owner, const SlotId& id);
  // The unexpired rerun marker times of `workflow` at `now`, when the markers are loaded. A
  // marker expires when it is older than kRerunMarkerLifetime and its slot is final.
  std::optional<std::vector<Time>> rerun_times(Owner owner, std::string_view workflow, Time now);
  std::optional<bool> paused(Owner owner, std::string_view workflow);

  // What a prefetch must load for `workflows` read from `start` on: the workflows not loaded
  // from `start` yet, whether markers and pause flags are missing, and the generation to hand
  // back to the fills. Workflows loaded from before `start` are trimmed to `start`; workflows no
  // prefetch named for kForgetAfter prefetches (removed from the configuration) are dropped.
  struct Missing {
    std::vector<std::string> workflows;
    bool markers = false;
    bool paused = false;
    std::uint64_t generation = 0;
  };
  Missing missing(Owner owner, const std::vector<std::string>& workflows, Time start);
  // Installs what was read at `generation` (dropped when a write was applied since).
  void fill_slots(Owner owner, std::uint64_t generation, const std::vector<std::string>& workflows,
                  Time start, std::vector<SlotState> rows);
  void fill_markers(Owner owner, std::uint64_t generation, std::vector<Marker> markers);
  void fill_paused(Owner owner, std::uint64_t generation, std::set<std::string> paused);

  // Writes of this process, after they committed.
  void put(const std::vector<SlotState>& states);
  void set_paused(std::string_view workflow, bool paused);
  void forget_reruns();  // markers changed: reload them
  void clear();

  std::size_t size();  // cached slot states (tests, logs)

  static constexpr std::uint64_t kForgetAfter = 60;  // about an hour of steps

 private:
  struct Workflow {
    Time floor{};  // every stored slot with time >= floor is in `slots`
    std::map<Time, SlotState> slots;
    std::uint64_t named = 0;  // the last prefetch that named it
  };
  bool usable(Owner owner) REQUIRES(mutex_);
  void clear_locked() REQUIRES(mutex_);

  Mutex mutex_;
  Owner owner_ GUARDED_BY(mutex_);
  std::uint64_t generation_ GUARDED_BY(mutex_) = 0;
  std::uint64_t prefetches_ GUARDED_BY(mutex_) = 0;
  std::map<std::string, Workflow, std::less<>> workflows_ GUARDED_BY(mutex_);
  std::optional<std::map<SlotId, Marker>> markers_ GUARDED_BY(mutex_);
  std::optional<std::set<std::string, std::less<>>> paused_ GUARDED_BY(mutex_);
};

}  // namespace celos
