// Deadlines in the step (step_phases.h, celos/deadline.h): after phase 3 every slot the step
// looked at, and every slot it changed, is checked against its deadline at the step's `now`.
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "model/step_phases.h"

namespace celos::detail {
namespace {

// A miss the step first sees this long after its deadline, on a slot that was never stored (a
// new workflow's backlog, a scheduler that was down for days), is neither stored nor notified:
// /api/v1/deadlines still lists it MISSED. A day covers any ordinary outage.
constexpr auto kMissHorizon = std::chrono::hours(24);

struct Verdict {
  std::optional<DeadlineState> state;  // nothing: no deadline, or a KILLED slot
  std::optional<SlotState> next;       // what to store, when anything changed
  std::string reason;
};

std::string missed_reason(const SlotState& s, Time deadline, bool succeeded_now) {
  if (succeeded_now)
    return fmt::format("SUCCESS only after the deadline {}", format_time(deadline));
  if (is_final(s.status)) return fmt::format("the slot ended {}", to_string(s.status));
  return fmt::format("not SUCCESS at the deadline {} (the slot is {})", format_time(deadline),
                     to_string(s.status));
}

// The deadline verdict on `s` (the slot's latest state in this step) at `now`. Most slots of
// most steps change nothing: `s` is copied only when something does.
Verdict judge(const Workflow& wf, const SlotState& s, bool stored, bool succeeded_now, Time now,
              const DeadlinePredictor* predictor) {
  Verdict v;
  const std::optional<Time> deadline = effective_deadline(wf, s);
  if (!deadline) return v;
  if (!stored && *deadline + kMissHorizon < now) return v;  // see kMissHorizon
  DeadlineForecast forecast;
  if (predictor && !is_final(s.status) && now < *deadline)
    forecast = predictor->predict(wf, s, now);
  v.state = succeeded_now && now > *deadline ? DeadlineState::kMissed
                                             : deadline_state_at(s, *deadline, now, forecast);
  std::optional<DeadlineState> next_state = s.deadline_state;
  if (v.state == DeadlineState::kMissed && s.deadline_state != DeadlineState::kMissed) {
    next_state = DeadlineState::kMissed;
    v.reason = missed_reason(s, *deadline, succeeded_now);
  } else if (v.state == DeadlineState::kAtRisk && !s.deadline_state) {
    next_state = DeadlineState::kAtRisk;
    v.reason = forecast.reason;
  }
  if (s.deadline == deadline && s.deadline_state == next_state) return v;
  v.next = s;
  v.next->deadline = *deadline;
  v.next->deadline_state = next_state;
  return v;
}

}  // namespace

void Step::check_deadlines() {
  Kills kills;
  for (WorkflowRun& run : runs_) {
    if (run.active) isolated(run, [&] { check_deadlines(run, kills); });
  }
  if (!kills.empty()) kill_missed(kills);
}

void Step::check_deadlines(WorkflowRun& run, Kills& kills) {
  const std::size_t changes = run.changes.size();
  std::map<Time, std::size_t> changed;
  for (std::size_t i = 0; i < changes; ++i) changed.emplace(run.changes[i].to.id.time, i);
  std::map<Time, const SlotState*> submitted;
  for (const SlotState& r : run.running) submitted.emplace(r.id.time, &r);
  for (std::size_t i = 0; i < run.slots.size(); ++i) {
    const SlotState& slot = run.slots[i];
    if (changed.count(slot.id.time)) continue;  // below, with its change
    auto pick = submitted.find(slot.id.time);
    if (pick == submitted.end()) {
      record_deadline(run, slot, run.stored[i] ? &slot : nullptr, nullptr, kills);
    } else {  // its RUNNING record is written already
      record_deadline(run, *pick->second, pick->second, nullptr, kills);
    }
  }
  for (std::size_t i = 0; i < changes; ++i) {
    SlotState latest = run.changes[i].to;
    const std::optional<SlotState>& from = run.changes[i].from;
    record_deadline(run, latest, from ? &*from : nullptr, &run.changes[i], kills);
  }
}

void Step::record_deadline(WorkflowRun& run, const SlotState& latest, const SlotState* before,
                           SlotChange* change, Kills& kills) {
  const bool stored = before || change;
  const bool succeeded_now =
      latest.status == SlotStatus::kSuccess && (!before || before->status != SlotStatus::kSuccess);
  Verdict v = judge(*run.wf, latest, stored, succeeded_now, now_, env_.predictor);
  if (v.state == DeadlineState::kAtRisk) ++report_.deadlines_at_risk;
  if (!v.next) {
    if (v.state == DeadlineState::kMissed && !is_final(latest.status) && run.wf->deadline &&
        run.wf->deadline->kill_on_miss) {
      v.next = latest;  // a kill that failed in an earlier step is tried again
    } else {
      return;
    }
  }
  if (v.next->deadline_state == DeadlineState::kMissed &&
      latest.deadline_state != DeadlineState::kMissed) {
    ++report_.deadlines_missed;
  }
  if (change) {
    change->to = *v.next;
    change->deadline_reason = v.reason;
  } else {
    std::optional<SlotState> from;
    if (before) from = *before;
    run.changes.push_back({std::move(from), *v.next, now_, "step", v.reason});
    change = &run.changes.back();
  }
  const bool kill = v.state == DeadlineState::kMissed && !is_final(change->to.status) &&
                    run.wf->deadline && run.wf->deadline->kill_on_miss;
  if (!kill) return;
  if (change->to.status == SlotStatus::kRunning && change->to.external_id) {
    kills.emplace_back(&run, static_cast<std::size_t>(change - run.changes.data()));
  } else {
    change->to = change->to.killed().value();
  }
}

void Step::kill_missed(Kills& kills) {
  // One task per workflow: a run's errors are its own tasks' to write.
  std::map<WorkflowRun*, std::vector<std::size_t>> by_run;
  for (auto [run, index] : kills) by_run[run].push_back(index);
  std::vector<std::function<void()>> tasks;
  for (auto& entry : by_run) {
    tasks.push_back([this, run = entry.first, &indexes = entry.second] {
      for (std::size_t index : indexes) kill_missed(*run, run->changes[index]);
    });
  }
  env_.executor.run_all(std::move(tasks));
}

void Step::kill_missed(WorkflowRun& run, SlotChange& change) {
  const SlotState& s = change.to;
  if (auto ok = fence_.confirm(); !ok) return run.error("not killing: " + ok.error().message);
  auto killed = call(*run.wf->service, "kill of " + to_string(s.id),
                     [&] { return run.wf->service->kill(s.id, *s.external_id); });
  if (!killed) {
    return run.error(fmt::format("killing slot {} ({}), which missed its deadline, failed: {}",
                                 format_time(s.id.time), *s.external_id, killed.error().message));
  }
  spdlog::info("slot {}: killed, it missed its deadline", to_string(s.id));
  change.to = s.killed().value();
}

}  // namespace celos::detail
