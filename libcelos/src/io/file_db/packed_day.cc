#include "io/file_db/packed_day.h"

#include <algorithm>
#include <chrono>
#include <limits>

namespace celos {
namespace {

std::int64_t millis_of(Time t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// A deadline an entry holds: whole seconds after its slot time, within an int32 of them.
bool packs_deadline(const SlotState& s) {
  if (!s.deadline) return true;
  const std::int64_t after = millis_of(*s.deadline) - millis_of(s.id.time);
  return after % 1000 == 0 && after / 1000 >= std::numeric_limits<std::int32_t>::min() &&
         after / 1000 <= std::numeric_limits<std::int32_t>::max();
}

bool needs_whole(const SlotState& s) {
  return s.message || s.retry_at || s.backfill || !packs_deadline(s) || !s.consumed.empty() ||
         s.run_id ||
         (s.external_id && s.external_id->size() > std::numeric_limits<std::uint16_t>::max());
}

}  // namespace

PackedDay::PackedDay(std::vector<SlotState> states) {
  // Two file names of one time (".000Z" or not): the first listed wins, as it always did.
  std::stable_sort(states.begin(), states.end(),
                   [](const SlotState& a, const SlotState& b) { return a.id.time < b.id.time; });
  entries_.reserve(states.size());
  for (std::size_t i = 0; i < states.size(); ++i) {
    if (i > 0 && states[i].id.time == states[i - 1].id.time) continue;
    add(states[i]);
  }
  entries_.shrink_to_fit();
  own_.shrink_to_fit();
  shared_.shrink_to_fit();
  whole_.shrink_to_fit();
  if (!deadlines_.empty()) deadlines_.resize(entries_.size());
  deadlines_.shrink_to_fit();
}

void PackedDay::add(SlotState& state) {
  Entry e;
  e.millis = millis_of(state.id.time);
  e.status = static_cast<std::uint8_t>(state.status);
  if (needs_whole(state)) {
    e.shared = kWhole;
    e.retry_count = static_cast<std::int32_t>(whole_.size());
    whole_.push_back(std::move(state));
    entries_.push_back(e);
    return;
  }
  e.retry_count = state.retry_count;
  add_deadline(e, state);
  if (state.external_id) {
    const std::string& id = *state.external_id;
    const std::size_t dash = id.find('-');
    const std::string_view own = std::string_view(id).substr(0, dash);
    e.flags |= kHasId;
    e.own = static_cast<std::uint32_t>(own_.size());
    e.own_length = static_cast<std::uint16_t>(own.size());
    own_.append(own);
    if (dash != std::string::npos) e.shared = intern(std::string_view(id).substr(dash));
  }
  entries_.push_back(e);
}

void PackedDay::add_deadline(Entry& e, const SlotState& state) {
  if (state.deadline_state) {
    e.flags |=
        static_cast<std::uint8_t>((static_cast<int>(*state.deadline_state) + 1) << kStateShift);
  }
  if (!state.deadline) return;
  e.flags |= kHasDeadline;
  deadlines_.resize(entries_.size() + 1);  // the entries before have none
  deadlines_.back() =
      static_cast<std::int32_t>((millis_of(*state.deadline) - millis_of(state.id.time)) / 1000);
}

std::int32_t PackedDay::intern(std::string_view part) {
  // A day holds a handful of distinct parts (one per Oozie server start): a linear search.
  for (std::size_t i = 0; i < shared_.size(); ++i) {
    if (shared_[i] == part) return static_cast<std::int32_t>(i);
  }
  shared_.emplace_back(part);
  return static_cast<std::int32_t>(shared_.size() - 1);
}

SlotState PackedDay::unpack_entry(const std::string& workflow, const Entry& e) const {
  if (e.shared == kWhole) {
    SlotState s = whole_[static_cast<std::size_t>(e.retry_count)];
    s.id.workflow = workflow;
    return s;
  }
  SlotState s = SlotState::waiting(SlotId{workflow, Time{std::chrono::milliseconds(e.millis)}});
  s.status = static_cast<SlotStatus>(e.status);
  s.retry_count = e.retry_count;
  if (e.flags & kHasDeadline) {
    const auto index = static_cast<std::size_t>(&e - entries_.data());
    s.deadline = s.id.time + std::chrono::seconds(deadlines_[index]);
  }
  if (const int state = e.flags >> kStateShift; state > 0)
    s.deadline_state = static_cast<DeadlineState>(state - 1);
  if (e.flags & kHasId) {
    std::string id = own_.substr(e.own, e.own_length);
    if (e.shared >= 0) id += shared_[static_cast<std::size_t>(e.shared)];
    s.external_id = std::move(id);
  }
  return s;
}

void PackedDay::unpack(const std::string& workflow, Time start, Time end,
                       std::vector<SlotState>& out) const {
  const std::int64_t from = millis_of(start), to = millis_of(end);
  auto it = std::lower_bound(entries_.begin(), entries_.end(), from,
                             [](const Entry& e, std::int64_t ms) { return e.millis < ms; });
  for (; it != entries_.end() && it->millis < to; ++it) out.push_back(unpack_entry(workflow, *it));
}

void PackedDay::unpack_window(const std::string& workflow, Time start, Time end,
                              std::vector<SlotState>& open,
                              std::vector<std::pair<Time, SlotStatus>>& closed) const {
  const std::int64_t from = millis_of(start), to = millis_of(end);
  auto it = std::lower_bound(entries_.begin(), entries_.end(), from,
                             [](const Entry& e, std::int64_t ms) { return e.millis < ms; });
  for (; it != entries_.end() && it->millis < to; ++it) {
    const auto status = static_cast<SlotStatus>(it->status);
    if (is_final(status)) {
      closed.emplace_back(Time{std::chrono::milliseconds(it->millis)}, status);
    } else {
      open.push_back(unpack_entry(workflow, *it));
    }
  }
}

std::size_t PackedDay::bytes() const {
  std::size_t n = sizeof(*this) + entries_.capacity() * sizeof(Entry) + own_.capacity();
  for (const std::string& s : shared_) n += sizeof(s) + s.capacity();
  return n + whole_.capacity() * sizeof(SlotState) + deadlines_.capacity() * sizeof(std::int32_t);
}

}  // namespace celos
