#include "io/postgres/slot_cache.h"

#include "celos/state_db.h"

namespace celos {

bool SlotCache::usable(Owner owner) {
  if (!owner) {
    // A standby (or a node between leaderships): whatever is cached may be overwritten by the
    // leader from now on.
    if (owner_) clear_locked();
    return false;
  }
  if (owner != owner_) {
    clear_locked();
    owner_ = owner;
  }
  return true;
}

void SlotCache::clear_locked() {
  ++generation_;
  owner_.reset();
  workflows_.clear();
  markers_.reset();
  paused_.reset();
}

std::optional<std::vector<SlotState>> SlotCache::slots(Owner owner, std::string_view workflow,
                                                       Time start, Time end) {
  MutexLock lock(mutex_);
  if (!usable(owner)) return std::nullopt;
  auto wf = workflows_.find(workflow);
  if (wf == workflows_.end() || start < wf->second.floor) return std::nullopt;
  std::vector<SlotState> out;
  if (end <= start) return out;
  const auto& slots = wf->second.slots;
  for (auto it = slots.lower_bound(start); it != slots.end() && it->first < end; ++it) {
    out.push_back(it->second);
  }
  return out;
}

std::optional<std::optional<SlotState>> SlotCache::slot(Owner owner, const SlotId& id) {
  MutexLock lock(mutex_);
  if (!usable(owner)) return std::nullopt;
  auto wf = workflows_.find(id.workflow);
  if (wf == workflows_.end() || id.time < wf->second.floor) return std::nullopt;
  auto it = wf->second.slots.find(id.time);
  if (it == wf->second.slots.end()) return std::optional<SlotState>{};
  return std::optional<SlotState>(it->second);
}

std::optional<std::vector<Time>> SlotCache::rerun_times(Owner owner, std::string_view workflow,
                                                        Time now) {
  MutexLock lock(mutex_);
  if (!usable(owner) || !markers_) return std::nullopt;
  std::vector<Time> out;
  for (auto it = markers_->lower_bound(SlotId{std::string(workflow), Time::min()});
       it != markers_->end() && it->first.workflow == workflow; ++it) {
    const Marker& m = it->second;
    // As the database answers it (postgres_state_db.cc): a marker of a slot that is not final
    // never expires (SPEC §16).
    const bool young = m.rerun_time > now - kRerunMarkerLifetime;
    if (young || !m.status || !is_final(*m.status)) out.push_back(m.slot.time);
  }
  return out;
}

std::optional<bool> SlotCache::paused(Owner owner, std::string_view workflow) {
  MutexLock lock(mutex_);
  if (!usable(owner) || !paused_) return std::nullopt;
  return paused_->count(workflow) > 0;
}

SlotCache::Missing SlotCache::missing(Owner owner, const std::vector<std::string>& workflows,
                                      Time start) {
  MutexLock lock(mutex_);
  Missing out;
  const bool use = usable(owner);  // may empty the cache (a new generation)
  out.generation = generation_;
  if (!use) return out;
  ++prefetches_;
  for (const std::string& id : workflows) {
    auto wf = workflows_.find(id);
    if (wf == workflows_.end() || start < wf->second.floor) {
      out.workflows.push_back(id);
      continue;
    }
    wf->second.named = prefetches_;
    // The window moved on: slots before it are read from the database again, when at all.
    auto& slots = wf->second.slots;
    slots.erase(slots.begin(), slots.lower_bound(start));
    wf->second.floor = start;
  }
  // A copy for the lambda: the analysis does not see the lock held around it.
  const std::uint64_t prefetches = prefetches_;
  std::erase_if(workflows_, [prefetches](const auto& entry) {
    return prefetches - entry.second.named > kForgetAfter;
  });
  out.markers = !markers_;
  out.paused = !paused_;
  return out;
}

void SlotCache::fill_slots(Owner owner, std::uint64_t generation,
                           const std::vector<std::string>& workflows, Time start,
                           std::vector<SlotState> rows) {
  MutexLock lock(mutex_);
  if (generation != generation_ || !usable(owner)) return;
  for (const std::string& id : workflows) {
    Workflow& wf = workflows_[id];
    wf.floor = start;
    wf.slots.clear();
    wf.named = prefetches_;
  }
  for (SlotState& s : rows) {
    auto wf = workflows_.find(s.id.workflow);
    if (wf == workflows_.end() || s.id.time < start) continue;
    const Time t = s.id.time;
    wf->second.slots.insert_or_assign(t, std::move(s));
  }
}

void SlotCache::fill_markers(Owner owner, std::uint64_t generation, std::vector<Marker> markers) {
  MutexLock lock(mutex_);
  if (generation != generation_ || !usable(owner)) return;
  markers_.emplace();
  for (Marker& m : markers) {
    SlotId id = m.slot;
    markers_->insert_or_assign(std::move(id), std::move(m));
  }
}

void SlotCache::fill_paused(Owner owner, std::uint64_t generation, std::set<std::string> paused) {
  MutexLock lock(mutex_);
  if (generation != generation_ || !usable(owner)) return;
  paused_.emplace(paused.begin(), paused.end());
}

void SlotCache::put(const std::vector<SlotState>& states) {
  MutexLock lock(mutex_);
  ++generation_;
  for (const SlotState& s : states) {
    if (auto wf = workflows_.find(s.id.workflow);
        wf != workflows_.end() && s.id.time >= wf->second.floor) {
      wf->second.slots.insert_or_assign(s.id.time, s);
    }
    if (markers_) {
      if (auto m = markers_->find(s.id); m != markers_->end()) m->second.status = s.status;
    }
  }
}

void SlotCache::set_paused(std::string_view workflow, bool paused) {
  MutexLock lock(mutex_);
  ++generation_;
  if (!paused_) return;
  if (paused) {
    paused_->emplace(workflow);
  } else if (auto it = paused_->find(workflow); it != paused_->end()) {
    paused_->erase(it);
  }
}

void SlotCache::forget_reruns() {
  MutexLock lock(mutex_);
  ++generation_;
  markers_.reset();
}

void SlotCache::clear() {
  MutexLock lock(mutex_);
  clear_locked();
}

std::size_t SlotCache::size() {
  MutexLock lock(mutex_);
  std::size_t n = 0;
  for (const auto& [_, wf] : workflows_) n += wf.slots.size();
  return n;
}

}  // namespace celos
