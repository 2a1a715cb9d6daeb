// One step's admission of backfill slots (celos/backfill.h, pump_backfills): each running plan
// counts its admitted slots that ended, then walks its workflows' slots from their cursors in
// the plan's order (merged over the workflows: the oldest, or newest, slot of any of them
// first) and admits the ones that match until max_running are in flight.
//
// The slots are written before the plan: a crash in between leaves admitted slots that the plan
// does not list, and the walk, starting again from the old cursors, finds them by their
// "backfill" key and lists them instead of admitting them again.
#include <algorithm>
#include <deque>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "model/backfill_count.h"

namespace celos {
namespace {

// The most slots one plan looks at in one step (skipped ones included): a plan whose slots
// mostly do not match goes on in the next step instead of holding this one up.
constexpr std::size_t kLookBudget = 50'000;

// One workflow's walk: the next times of its schedule from the cursor, one chunk at a time,
// with the stored states of that chunk read when the walk first takes from it.
struct Walk {
  const Workflow* wf = nullptr;
  Time lo{}, hi{};  // the plan's range for this workflow
  Time scanned{};   // oldest: times before it are listed; newest: times at or after it
  std::deque<Time> ahead;
  Time chunk_from{}, chunk_to{};
  bool loaded = false;
  std::map<Time, SlotState> stored;
};

class PlanPump {
 public:
  PlanPump(const WorkflowConfig& config, StateDatabase& db, BackfillPlan& plan, Time now)
      : config_(config), db_(db), plan_(plan), now_(now), context_(config.schedule_context()) {}

  // Counts the ended slots, then admits the next ones into `out.admitted`.
  Result<void> run(BackfillPump& out);

 private:
  Result<void> refresh();
  Result<Walk*> next_walk();
  Result<void> fill(Walk& walk);
  Result<std::optional<SlotState>> stored(Walk& walk, Time t);
  void take(Walk& walk, Time t);

  const WorkflowConfig& config_;
  StateDatabase& db_;
  BackfillPlan& plan_;
  Time now_;  // slots from the step's `now` on are not due yet: the walks stop before them
  ScheduleContext context_;
  std::vector<Walk> walks_;
};

Result<void> PlanPump::refresh() {
  std::vector<SlotId> still;
  for (const SlotId& id : plan_.in_flight) {
    auto state = db_.get_slot(id);
    if (!state) return tl::unexpected(state.error());
    // A slot rerun by hand meanwhile left the plan: it counts as it is now.
    if (*state && (is_final((*state)->status) || (*state)->backfill != plan_.id)) {
      ++plan_.ended[(*state)->status];
    } else {
      still.push_back(id);
    }
  }
  plan_.in_flight = std::move(still);
  return {};
}

Result<void> PlanPump::fill(Walk& w) {
  const bool oldest = plan_.order == BackfillOrder::kOldest;
  auto chunk = std::chrono::milliseconds(std::chrono::hours(24));
  while (w.ahead.empty()) {
    const Time from = oldest ? w.scanned : std::max(w.lo, w.scanned - chunk);
    const Time to = oldest ? std::min(w.hi, w.scanned + chunk) : w.scanned;
    if (to <= from) return {};  // the walk is over
    auto times = w.wf->schedule->times(from, to, context_);
    if (!times) return tl::unexpected(times.error());
    if (oldest) {
      w.ahead.assign(times->begin(), times->end());
    } else {
      w.ahead.assign(times->rbegin(), times->rend());
    }
    w.scanned = oldest ? to : from;
    w.chunk_from = from;
    w.chunk_to = to;
    w.loaded = false;
    if (chunk < std::chrono::hours(24 * 366)) chunk *= 2;  // sparse schedules: bigger steps
  }
  return {};
}

Result<std::optional<SlotState>> PlanPump::stored(Walk& w, Time t) {
  if (!w.loaded) {
    auto states = db_.get_slots(w.wf->id, w.chunk_from, w.chunk_to);
    if (!states) return tl::unexpected(states.error());
    w.stored.clear();
    for (SlotState& s : *states) w.stored.emplace(s.id.time, std::move(s));
    w.loaded = true;
  }
  auto it = w.stored.find(t);
  if (it == w.stored.end()) return std::optional<SlotState>{};
  return std::optional<SlotState>(it->second);
}

// The walk whose next slot comes first in the plan's order (ties: the smaller workflow id).
Result<Walk*> PlanPump::next_walk() {
  if (walks_.empty()) {
    for (const std::string& id : plan_.workflows) {
      const Workflow* wf = config_.find(id);
      if (wf == nullptr) continue;  // removed since: nothing of it is admitted
      auto [lo, hi] = detail::plan_bounds(plan_, *wf);
      auto cursor = plan_.cursors.find(id);
      const bool oldest = plan_.order == BackfillOrder::kOldest;
      const Time start = cursor != plan_.cursors.end() ? cursor->second : (oldest ? lo : hi);
      Walk walk;
      walk.wf = wf;
      walk.lo = lo;
      walk.hi = std::min(hi, now_);
      walk.scanned = oldest ? start : std::min(start, walk.hi);
      walks_.push_back(std::move(walk));
    }
  }
  Walk* best = nullptr;
  for (Walk& w : walks_) {
    if (auto filled = fill(w); !filled) return tl::unexpected(filled.error());
    if (w.ahead.empty()) continue;
    if (best == nullptr) {
      best = &w;
    } else if (plan_.order == BackfillOrder::kOldest ? w.ahead.front() < best->ahead.front()
                                                     : w.ahead.front() > best->ahead.front()) {
      best = &w;
    }
  }
  return best;
}

void PlanPump::take(Walk& w, Time t) {
  w.ahead.pop_front();
  plan_.cursors[w.wf->id] =
      plan_.order == BackfillOrder::kOldest ? t + std::chrono::milliseconds(1) : t;
}

Result<void> PlanPump::run(BackfillPump& out) {
  if (auto refreshed = refresh(); !refreshed) return refreshed;
  for (std::size_t looked = 0; plan_.in_flight.size() < std::size_t(plan_.max_running);) {
    if (looked++ == kLookBudget) return {};
    auto walk = next_walk();
    if (!walk) return tl::unexpected(walk.error());
    if (*walk == nullptr) {  // every slot due looked at
      if (plan_.in_flight.empty() && plan_.end <= now_) plan_.state = BackfillState::kDone;
      return {};
    }
    Walk& w = **walk;
    const Time t = w.ahead.front();
    auto state = stored(w, t);
    if (!state) return tl::unexpected(state.error());
    take(w, t);
    const SlotId id{w.wf->id, t};
    if (*state && (*state)->backfill == plan_.id) {  // admitted before a crash
      plan_.in_flight.push_back(id);
    } else if (reprocess_matches(plan_.reprocess, *state)) {
      SlotState next = state->value_or(SlotState::waiting(id));
      if (is_final(next.status)) next = next.rerun().value();
      next.backfill = plan_.id;
      out.admitted.emplace_back(*state, std::move(next));
      plan_.in_flight.push_back(id);
    } else {
      ++plan_.skipped;
    }
  }
  return {};
}

// Writes the admitted slots (markers, then states), then the plans that changed.
Result<void> commit(StateDatabase& db, const BackfillPump& out, Time now) {
  if (out.admitted.empty()) return {};
  std::vector<SlotId> ids;
  std::vector<SlotState> states;
  for (const auto& [_, to] : out.admitted) {
    ids.push_back(to.id);
    states.push_back(to);
  }
  if (auto marked = db.mark_reruns(ids, now); !marked) return marked;
  return db.put_slots(states);
}

}  // namespace

BackfillPump pump_backfills(const WorkflowConfig& config, StateDatabase& db, Time now) {
  BackfillPump out;
  auto plans = Backfills(config, db).list();
  if (!plans) {
    out.errors.push_back("backfills: " + plans.error().message);
    return out;
  }
  std::vector<std::pair<BackfillPlan, std::string>> changed;
  for (BackfillPlan& plan : *plans) {
    if (plan.state != BackfillState::kRunning) continue;
    const std::string before = backfill_to_json(plan);
    const std::size_t admitted_before = out.admitted.size();
    if (auto ran = PlanPump(config, db, plan, now).run(out); !ran) {
      out.admitted.resize(admitted_before);
      out.errors.push_back(fmt::format("backfill {}: {}", plan.id, ran.error().message));
      out.running.insert(plan.id);
      continue;
    }
    if (plan.state == BackfillState::kDone) {
      plan.finished = now;
      spdlog::info("backfill {} done: {} slots", plan.id, plan.ended_count());
    } else {
      out.running.insert(plan.id);
    }
    std::string after = backfill_to_json(plan);
    if (after != before) changed.emplace_back(plan, std::move(after));
  }
  out.plans = std::move(*plans);
  if (auto written = commit(db, out, now); !written) {
    out.errors.push_back("backfills: admitting slots failed: " + written.error().message);
    out.admitted.clear();
    return out;  // the plans stay as they were: the next step admits again
  }
  for (const auto& [plan, record] : changed) {
    if (auto stored = db.put_backfill_record(plan.id, record); !stored) {
      out.errors.push_back(fmt::format("backfill {}: {}", plan.id, stored.error().message));
    }
  }
  return out;
}

}  // namespace celos
