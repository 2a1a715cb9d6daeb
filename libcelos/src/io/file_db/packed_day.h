// The slot states of one day directory, held compactly in the file state database's cache.
//
// A std::map<Time, SlotState> costs about 300 bytes a slot; 10,000 hourly workflows keep
// 1.68 million slots in the 7-day window, which made the cache alone half a gigabyte (issue 18).
// A packed day keeps 24 bytes a slot plus its external id's own part: an id is split at its
// first '-' and the rest is kept once per day ("0000042-150916000002047-oozie-oozi-W": the
// Oozie server's part repeats in every id). A slot's deadline and deadline state (issue 27) are
// kept in 4 bytes more, only in days that have any. The rare states with a message, a retry time
// or consumed instances are kept whole beside.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "celos/slot.h"

namespace celos {

class PackedDay {
 public:
  PackedDay() = default;
  // `states` of one workflow and day, any order.
  explicit PackedDay(std::vector<SlotState> states);

  std::size_t size() const { return entries_.size(); }
  // Appends the states with times in [start, end) to `out`, oldest first.
  void unpack(const std::string& workflow, Time start, Time end, std::vector<SlotState>& out) const;
  // The same for a step's window: whole states of the slots that are not final, only time and
  // status of the final ones (no id is rebuilt for a SUCCESS slot).
  void unpack_window(const std::string& workflow, Time start, Time end,
                     std::vector<SlotState>& open,
                     std::vector<std::pair<Time, SlotStatus>>& closed) const;
  // Bytes held (entries, id parts, whole states), for tests and the memory budget.
  std::size_t bytes() const;

 private:
  struct Entry {
    std::int64_t millis = 0;       // slot time
    std::uint32_t own = 0;         // offset of the id's own part in own_
    std::uint16_t own_length = 0;  // its length
    std::uint8_t status = 0;
    std::uint8_t flags = 0;  // kHasId, kHasDeadline, the deadline state (kStateShift)
    std::int32_t retry_count = 0;
    std::int32_t shared = -1;  // index in shared_ of the part from the first '-', or -1
  };
  static constexpr std::int32_t kWhole = -2;  // retry_count indexes whole_ instead
  static constexpr std::uint8_t kHasId = 1, kHasDeadline = 2;
  // The deadline state + 1 (0: none) in the flags' bits from this one.
  static constexpr int kStateShift = 2;

  void add(SlotState& state);
  void add_deadline(Entry& e, const SlotState& state);
  std::int32_t intern(std::string_view part);
  SlotState unpack_entry(const std::string& workflow, const Entry& e) const;

  std::vector<Entry> entries_;       // by time
  std::string own_;                  // the ids' own parts, concatenated
  std::vector<std::string> shared_;  // distinct shared parts
  std::vector<SlotState> whole_;     // states with optional keys or very long ids
  // Per entry (empty when no entry has a deadline): its deadline − its slot time, in seconds.
  std::vector<std::int32_t> deadlines_;
};

}  // namespace celos
