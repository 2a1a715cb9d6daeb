// A workflow's part of the step that needs no call: loading its window, counting its slots.
#include "model/step_run.h"

#include "celos/state_db.h"

namespace celos::detail {
namespace {

// One walk over the sorted schedule times and stored states; stored states at times that are
// not the schedule's (it changed) are left out.
void merge_window(WorkflowRun& run, const std::vector<Time>& times, StateDatabase::Window& window) {
  auto open = window.open.begin();
  auto closed = window.closed.begin();
  run.slots.reserve(times.size() - std::min(times.size(), window.closed.size()));
  for (Time t : times) {
    while (open != window.open.end() && open->id.time < t) ++open;
    while (closed != window.closed.end() && closed->first < t) ++closed;
    if (closed != window.closed.end() && closed->first == t) {
      ++run.final_counts[closed->second];
    } else if (open != window.open.end() && open->id.time == t) {
      run.slots.push_back(std::move(*open));
      run.stored.push_back(true);
    } else {
      run.slots.push_back(SlotState::waiting(SlotId{run.wf->id, t}));
      run.stored.push_back(false);
    }
  }
}

// Adds the slots outside the schedule's window that a rerun marker keeps in view (not final).
Result<void> add_marked_slots(WorkflowRun& run, StateDatabase& db, Time now,
                              const std::vector<Time>& times) {
  const Workflow& wf = *run.wf;
  auto reruns = db.rerun_times(wf.id, now);
  if (!reruns) return tl::unexpected(reruns.error());
  for (Time t : *reruns) {
    if (t < wf.start_time) continue;
    run.marked.insert(t);
    if (std::binary_search(times.begin(), times.end(), t)) continue;
    auto state = db.get_slot(SlotId{wf.id, t});
    if (!state) return tl::unexpected(state.error());
    SlotState s = state->value_or(SlotState::waiting(SlotId{wf.id, t}));
    if (is_final(s.status)) {
      ++run.final_counts[s.status];
      continue;
    }
    auto at = std::lower_bound(run.slots.begin(), run.slots.end(), t,
                               [](const SlotState& x, Time y) { return x.id.time < y; });
    run.stored.insert(run.stored.begin() + (at - run.slots.begin()), state->has_value());
    run.slots.insert(at, std::move(s));
  }
  return {};
}

}  // namespace

Result<void> load_window(WorkflowRun& run, StateDatabase& db, Time now,
                         const ScheduleContext& context) {
  const Workflow& wf = *run.wf;
  const Time window_start = std::max<Time>(now - kSlidingWindow, wf.start_time);
  auto times = wf.schedule->times(window_start, now, context);
  if (!times) return tl::unexpected(times.error());
  auto window = db.get_window(wf.id, window_start, now);
  if (!window) return tl::unexpected(window.error());
  merge_window(run, *times, *window);
  return add_marked_slots(run, db, now, *times);
}

std::vector<SlotState> pick_with_lanes(const SchedulingStrategy& strategy,
                                       const std::vector<SlotState>& slots,
                                       const std::set<std::string>& running_backfills) {
  std::vector<SlotState> live;
  bool backfill_ready = false;
  for (const SlotState& s : slots) {
    if (!s.backfill || s.status == SlotStatus::kRunning) {
      live.push_back(s);
    } else if (s.status == SlotStatus::kReady && running_backfills.count(*s.backfill)) {
      backfill_ready = true;
    }
  }
  std::vector<SlotState> picks = strategy.pick(live);
  if (!backfill_ready) return picks;
  // The second lane sees the live picks as RUNNING and no live READY slot (those it left are
  // beyond the capacity), so it can only take what is left.
  std::set<Time> picked;
  for (const SlotState& p : picks) picked.insert(p.id.time);
  std::vector<SlotState> view;
  for (const SlotState& s : slots) {
    if (picked.count(s.id.time)) {
      SlotState running = s;
      running.status = SlotStatus::kRunning;
      view.push_back(std::move(running));
    } else if (s.status == SlotStatus::kRunning) {
      view.push_back(s);
    } else if (s.backfill && s.status == SlotStatus::kReady &&
               running_backfills.count(*s.backfill)) {
      view.push_back(s);
    }
  }
  for (SlotState& p : strategy.pick(view)) picks.push_back(std::move(p));
  return picks;
}

void count_slots(const WorkflowRun& run, std::map<SlotStatus, int>& counts) {
  std::map<Time, SlotStatus> changed;  // only the changed times go through a map
  for (const SlotState& s : run.running) changed[s.id.time] = s.status;
  for (const SlotChange& c : run.changes) changed[c.to.id.time] = c.to.status;
  for (const SlotState& s : run.slots) {
    auto it = changed.find(s.id.time);
    if (it == changed.end()) {
      ++counts[s.status];
    } else {
      ++counts[it->second];
      changed.erase(it);
    }
  }
  for (const auto& [_, status] : changed) ++counts[status];
  for (const auto& [status, count] : run.final_counts) counts[status] += count;
}

}  // namespace celos::detail
