// The memory of data checks between steps (model/data_check_memory.h).
#include "model/data_check_memory.h"

#include <algorithm>
#include <cstdint>

namespace celos::detail {
namespace {

// 2^20 steps is beyond any sensible `max`; capping the exponent keeps the shift defined.
constexpr int kMaxDoublings = 20;

// The entry kept for `slot` in a workflow -> slot time -> entry map, or null.
template <class Slots>
const auto* find_entry(const Slots& slots, const SlotId& slot) {
  using Entry = typename Slots::mapped_type::mapped_type;
  auto w = slots.find(slot.workflow);
  if (w == slots.end()) return static_cast<const Entry*>(nullptr);
  auto e = w->second.find(slot.time);
  return e == w->second.end() ? static_cast<const Entry*>(nullptr) : &e->second;
}

}  // namespace

void DataCheckMemory::configure(DataCheckBackoff backoff) {
  MutexLock lock(mutex_);
  backoff_ = std::move(backoff);
  if (backoff_.step.count() <= 0) slots_.clear();
}

bool DataCheckMemory::backs_off() const {
  MutexLock lock(mutex_);
  return backoff_.step.count() > 0;
}

// Due from half a step before `next` on: a periodic step that comes a little early (timer
// jitter) still checks, one that comes a whole step early does not.
bool DataCheckMemory::due(const Entry& e, Time now) const {
  return now + backoff_.step / 2 >= e.next;
}

std::optional<int> DataCheckMemory::deferred(const SlotId& slot, Time now) const {
  MutexLock lock(mutex_);
  const auto* e = find_entry(slots_, slot);
  if (e == nullptr || due(*e, now)) return std::nullopt;
  return e->paths;
}

std::optional<Time> DataCheckMemory::next_check(const SlotId& slot, Time now) const {
  MutexLock lock(mutex_);
  const auto* e = find_entry(slots_, slot);
  if (e == nullptr || due(*e, now)) return std::nullopt;
  return e->next;
}

void DataCheckMemory::update(const std::string& workflow, const std::vector<CheckOutcome>& outcomes,
                             Time now) {
  MutexLock lock(mutex_);
  if (backoff_.step.count() <= 0) return;
  std::map<Time, Entry> old = std::move(slots_[workflow]);
  std::map<Time, Entry>& kept = slots_[workflow];
  kept.clear();
  for (const CheckOutcome& o : outcomes) {
    auto before = old.find(o.slot);
    if (o.kind == CheckOutcome::Kind::kKept) {
      if (before != old.end()) kept.emplace(o.slot, before->second);
      continue;
    }
    if (o.kind != CheckOutcome::Kind::kMissing) continue;
    Entry e;
    e.misses = before == old.end() ? 1 : before->second.misses + 1;
    e.paths = o.paths;
    // One step after the first miss, then 2, 4, 8, ... steps, at most `max`.
    const auto steps = std::int64_t{1} << std::min(e.misses - 1, kMaxDoublings);
    const auto interval = std::min<std::chrono::seconds>(backoff_.step * steps, backoff_.max);
    e.next = now + interval;
    kept.emplace(o.slot, e);
  }
  if (kept.empty()) slots_.erase(workflow);
}

void DataCheckMemory::reset(const std::set<std::string>& workflows) {
  MutexLock lock(mutex_);
  for (const std::string& w : workflows) slots_.erase(w);
}

void DataCheckMemory::retain(const std::set<std::string>& current) {
  MutexLock lock(mutex_);
  std::erase_if(slots_, [&](const auto& kv) { return current.count(kv.first) == 0; });
}

bool DataCheckMemory::too_big(const std::string& uri, const std::string& dir, Time now) const {
  MutexLock lock(mutex_);
  auto it = too_big_.find({uri, dir});
  return it != too_big_.end() && now < it->second;
}

void DataCheckMemory::note_too_big(const std::string& uri, const std::string& dir, Time now) {
  MutexLock lock(mutex_);
  std::erase_if(too_big_, [&](const auto& kv) { return now >= kv.second; });
  too_big_[{uri, dir}] = now + kTooBigForgotten;
}

}  // namespace celos::detail
