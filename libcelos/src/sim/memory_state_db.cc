// The simulation's state database: everything in maps, slots kept compact (a final slot of a
// simulated month is a status, a retry count and a short external id), so that 720,000 slots
// fit in well under 100 MB and a step's window is one walk of an ordered map.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>

#include "celos/mutex.h"
#include "sim/services.h"

namespace celos::sim {
namespace {

// What a slot keeps besides the four keys of SPEC §5; absent for almost every slot.
struct Extra {
  std::optional<std::string> message;
  std::optional<Time> retry_at;
  std::map<std::string, std::vector<Time>> consumed;
  std::optional<std::string> backfill;
  std::optional<Time> deadline;
  std::optional<DeadlineState> deadline_state;
  std::optional<std::string> run_id;
};

struct Stored {
  SlotStatus status = SlotStatus::kWaiting;
  bool has_external_id = false;
  int retry_count = 0;
  std::string external_id;
  std::unique_ptr<Extra> extra;
};

// A workflow's slots, by time: sorted columns rather than a map. The simulation appends slots
// in time order almost always, and every step walks a week of each workflow's slots for their
// times and statuses only (at 1,000 workflows a map's node-by-node walk, then whole 64-byte
// entries, were the step's largest cost): the two narrow columns keep that walk in cache.
class SlotTable {
 public:
  // The index of the first slot at or after t.
  std::size_t lower_bound(Time t) const {
    if (times_.empty() || times_.back() < t) return times_.size();
    return std::size_t(std::lower_bound(times_.begin(), times_.end(), t) - times_.begin());
  }
  std::size_t size() const { return times_.size(); }
  Time time(std::size_t i) const { return times_[i]; }
  SlotStatus status(std::size_t i) const { return statuses_[i]; }
  const Stored& stored(std::size_t i) const { return rest_[i]; }
  const Stored* find(Time t) const {
    const std::size_t i = lower_bound(t);
    return i < times_.size() && times_[i] == t ? &rest_[i] : nullptr;
  }
  void put(Time t, Stored s) {
    std::size_t i = lower_bound(t);
    if (i == times_.size() || times_[i] != t) {
      times_.insert(times_.begin() + std::ptrdiff_t(i), t);
      statuses_.insert(statuses_.begin() + std::ptrdiff_t(i), s.status);
      rest_.insert(rest_.begin() + std::ptrdiff_t(i), std::move(s));
      return;
    }
    statuses_[i] = s.status;
    rest_[i] = std::move(s);
  }

 private:
  std::vector<Time> times_;
  std::vector<SlotStatus> statuses_;
  std::vector<Stored> rest_;  // its status is statuses_'s
};

// One workflow's part of the database, with its own lock: the step's threads each read and
// write their own workflows, and one lock over every workflow made them take turns (at 1,000
// workflows the simulated month ran on little more than one core).
struct WorkflowData {
  Mutex mutex;
  SlotTable slots GUARDED_BY(mutex);
  std::map<Time, Time> reruns GUARDED_BY(mutex);  // slot time -> when the rerun was asked
  bool paused GUARDED_BY(mutex) = false;
};

Stored compact(const SlotState& s) {
  Stored out;
  out.status = s.status;
  out.retry_count = s.retry_count;
  out.has_external_id = s.external_id.has_value();
  if (s.external_id) out.external_id = *s.external_id;
  if (s.message || s.retry_at || !s.consumed.empty() || s.backfill || s.deadline ||
      s.deadline_state || s.run_id) {
    out.extra = std::make_unique<Extra>(Extra{s.message, s.retry_at, s.consumed, s.backfill,
                                              s.deadline, s.deadline_state, s.run_id});
  }
  return out;
}

SlotState expand(std::string_view workflow, Time t, const Stored& s) {
  SlotState out;
  out.id = SlotId{std::string(workflow), t};
  out.status = s.status;
  out.retry_count = s.retry_count;
  if (s.has_external_id) out.external_id = s.external_id;
  if (s.extra) {
    out.message = s.extra->message;
    out.retry_at = s.extra->retry_at;
    out.consumed = s.extra->consumed;
    out.backfill = s.extra->backfill;
    out.deadline = s.extra->deadline;
    out.deadline_state = s.extra->deadline_state;
    out.run_id = s.extra->run_id;
  }
  return out;
}

// The slots of `t` in [start, end), and the same as a step's window (open ones whole, final ones
// as time and status). Callers hold the lock of the workflow that owns `t`.
std::vector<SlotState> slots_in(std::string_view workflow, const SlotTable& t, Time start,
                                Time end) {
  std::vector<SlotState> out;
  for (std::size_t i = t.lower_bound(start); i < t.size() && t.time(i) < end; ++i) {
    out.push_back(expand(workflow, t.time(i), t.stored(i)));
  }
  return out;
}

StateDatabase::Window window_of(std::string_view workflow, const SlotTable& t, Time start,
                                Time end) {
  StateDatabase::Window window;
  const std::size_t first = t.lower_bound(start);
  std::size_t last = first;
  while (last < t.size() && t.time(last) < end) ++last;
  window.closed.reserve(last - first);
  for (std::size_t i = first; i < last; ++i) {
    if (is_final(t.status(i))) {
      window.closed.emplace_back(t.time(i), t.status(i));
    } else {
      window.open.push_back(expand(workflow, t.time(i), t.stored(i)));
    }
  }
  return window;
}

class MemoryStateDatabase final : public StateDatabase {
 public:
  Result<std::optional<SlotState>> get_slot(const SlotId& id) override {
    WorkflowData* w = data(id.workflow);
    if (w == nullptr) return std::optional<SlotState>{};
    MutexLock lock(w->mutex);
    const Stored* s = w->slots.find(id.time);
    if (s == nullptr) return std::optional<SlotState>{};
    return std::optional<SlotState>(expand(id.workflow, id.time, *s));
  }

  Result<std::vector<SlotState>> get_slots(std::string_view workflow, Time start,
                                           Time end) override {
    WorkflowData* w = data(workflow);
    if (w == nullptr) return std::vector<SlotState>{};
    MutexLock lock(w->mutex);
    return slots_in(workflow, w->slots, start, end);
  }

  Result<Window> get_window(std::string_view workflow, Time start, Time end) override {
    WorkflowData* w = data(workflow);
    if (w == nullptr) return Window{};
    MutexLock lock(w->mutex);
    return window_of(workflow, w->slots, start, end);
  }

  Result<void> put_slots(const std::vector<SlotState>& states) override {
    for (const SlotState& s : states) {
      WorkflowData& w = data_or_new(s.id.workflow);
      MutexLock lock(w.mutex);
      w.slots.put(s.id.time, compact(s));
    }
    return {};
  }

  Result<void> mark_rerun(const SlotId& id, Time now) override {
    WorkflowData& w = data_or_new(id.workflow);
    MutexLock lock(w.mutex);
    w.reruns[id.time] = now;
    return {};
  }

  Result<std::vector<Time>> rerun_times(std::string_view workflow, Time now) override {
    std::vector<Time> out;
    WorkflowData* w = data(workflow);
    if (w == nullptr) return out;
    MutexLock lock(w->mutex);
    for (auto it = w->reruns.begin(); it != w->reruns.end();) {
      // As the file database: an old marker expires once its slot is final (SPEC §16).
      const Stored* s = w->slots.find(it->first);
      if (now - it->second > kRerunMarkerLifetime && s != nullptr && is_final(s->status)) {
        it = w->reruns.erase(it);
        continue;
      }
      out.push_back(it->first);
      ++it;
    }
    return out;
  }

  Result<bool> is_paused(std::string_view workflow) override {
    WorkflowData* w = data(workflow);
    if (w == nullptr) return false;
    MutexLock lock(w->mutex);
    return w->paused;
  }

  Result<void> set_paused(std::string_view workflow, bool paused) override {
    WorkflowData& w = data_or_new(workflow);
    MutexLock lock(w.mutex);
    w.paused = paused;
    return {};
  }

  Result<Maintenance> maintenance() override {
    MutexLock lock(mutex_);
    return maintenance_;
  }

  Result<void> set_maintenance(const Maintenance& maintenance) override {
    MutexLock lock(mutex_);
    maintenance_ = maintenance;
    return {};
  }

  Result<void> append_history(const std::vector<SlotHistoryEntry>& entries) override {
    MutexLock lock(mutex_);
    for (const SlotHistoryEntry& e : entries) history_[e.to.id].push_back(e);
    return {};
  }

  Result<std::vector<SlotHistoryEntry>> slot_history(const SlotId& id) override {
    MutexLock lock(mutex_);
    auto it = history_.find(id);
    if (it == history_.end()) return std::vector<SlotHistoryEntry>{};
    return it->second;
  }

  Result<std::size_t> prune_history(Time before) override {
    MutexLock lock(mutex_);
    std::size_t pruned = 0;
    for (auto it = history_.begin(); it != history_.end();) {
      const bool old = it->first.time < before &&
                       std::all_of(it->second.begin(), it->second.end(),
                                   [&](const SlotHistoryEntry& e) { return e.at < before; });
      if (!old) {
        ++it;
        continue;
      }
      pruned += it->second.size();
      it = history_.erase(it);
    }
    return pruned;
  }

  Result<void> announce_instance(std::string_view dataset, Time time, Time) override {
    MutexLock lock(mutex_);
    announced_[std::string(dataset)].insert(time);
    return {};
  }

  Result<std::vector<Time>> announced_instances(std::string_view dataset, Time start,
                                                Time end) override {
    MutexLock lock(mutex_);
    std::vector<Time> out;
    auto it = announced_.find(dataset);
    if (it == announced_.end()) return out;
    for (auto t = it->second.lower_bound(start); t != it->second.end() && *t < end; ++t) {
      out.push_back(*t);
    }
    return out;
  }

  Result<std::vector<std::string>> backfill_records() override {
    MutexLock lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [id, record] : backfills_) out.push_back(record);
    return out;
  }
  Result<void> put_backfill_record(const std::string& id, const std::string& record) override {
    MutexLock lock(mutex_);
    backfills_[id] = record;
    return {};
  }

 private:
  // A workflow's part, or nullptr. Parts are never removed, so the pointer stays valid after
  // mutex_ is released; the part's own mutex guards what is in it.
  WorkflowData* data(std::string_view workflow) EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    auto it = workflows_.find(workflow);
    return it == workflows_.end() ? nullptr : it->second.get();
  }
  WorkflowData& data_or_new(std::string_view workflow) EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    auto it = workflows_.find(workflow);
    if (it == workflows_.end()) {
      it = workflows_.emplace(std::string(workflow), std::make_unique<WorkflowData>()).first;
    }
    return *it->second;
  }

  Mutex mutex_;
  // Hashed: the step looks a workflow up several times per step.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::unique_ptr<WorkflowData>, Hash, std::equal_to<>> workflows_
      GUARDED_BY(mutex_);
  Maintenance maintenance_ GUARDED_BY(mutex_);
  std::map<SlotId, std::vector<SlotHistoryEntry>> history_ GUARDED_BY(mutex_);
  std::map<std::string, std::set<Time>, std::less<>> announced_ GUARDED_BY(mutex_);
  std::map<std::string, std::string> backfills_ GUARDED_BY(mutex_);  // plan id -> its record
};

}  // namespace

std::unique_ptr<StateDatabase> make_memory_state_database() {
  return std::make_unique<MemoryStateDatabase>();
}

}  // namespace celos::sim
