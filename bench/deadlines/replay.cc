// The replay (replay.h). Everything random is drawn up front from one seeded generator, so a
// run is repeatable; what the scheduler decides (READY, RUNNING, SUCCESS, AT_RISK, MISSED) comes
// from the real step at each explicit time.
#include "replay.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "../bench_util.h"
#include "celos/scheduler.h"
#include "celos/state_db_open.h"
#include "testing/fakes.h"

namespace celos::bench {
namespace {

using std::chrono::minutes;

const Time kEpoch = make_time(2026, 1, 1);

// One workflow's world: when each slot's input arrives and how long its job runs.
struct Plan {
  std::map<Time, Time> ready_at;             // by slot time
  std::map<Time, std::chrono::seconds> run;  // by slot time
};

// Draws a workflow's slots: inputs 5-20 min after the slot (its own usual delay, a few minutes
// of jitter), 5 % of them late by an outage (exponential, mean 60 min); jobs of 15-40 min
// (+-10 %), twice as long from 00:00 to 05:59 for a third of the workflows, and 3 % of them
// slow (x2 to x4).
Plan draw_plan(std::mt19937_64& rng, int hours) {
  std::uniform_real_distribution<double> u(0, 1);
  const double delay = 5 + 15 * u(rng), run = 15 + 25 * u(rng);
  const bool nightly = u(rng) < 1.0 / 3;
  std::exponential_distribution<double> outage(1.0 / 60);
  Plan plan;
  for (int h = 0; h < hours; ++h) {
    const Time slot = kEpoch + std::chrono::hours(h);
    double d = delay + 4 * u(rng);
    if (u(rng) < 0.05) d += outage(rng);
    double r = run * (0.9 + 0.2 * u(rng));
    if (nightly && to_civil(slot).hour < 6) r *= 2;
    if (u(rng) < 0.03) r *= 2 + 2 * u(rng);
    plan.ready_at[slot] = slot + std::chrono::seconds(static_cast<long>(d * 60));
    plan.run[slot] = std::chrono::seconds(static_cast<long>(r * 60));
  }
  return plan;
}

// Ready when the plan's input has arrived by the step's time.
class PlannedTrigger final : public Trigger {
 public:
  explicit PlannedTrigger(const Plan& plan) : plan_(plan) {}
  Result<TriggerStatus> evaluate(Time slot, TriggerContext& context) const override {
    auto it = plan_.ready_at.find(slot);
    const bool ready = it != plan_.ready_at.end() && context.now() >= it->second;
    return TriggerStatus{"PlannedTrigger", ready, "", {}};
  }

 private:
  const Plan& plan_;
};

// Jobs that end when the plan says, at the time the replay sets before each step.
class PlannedService final : public ExternalService {
 public:
  PlannedService(const Plan& plan, const Time& now) : plan_(plan), now_(now) {}
  Result<std::string> submit(const SlotId& slot) override { return format_time(slot.time); }
  Result<void> start(const SlotId& slot, const std::string&) override {
    started_[slot.time] = now_;
    ends_.emplace(now_ + plan_.run.at(slot.time));
    return {};
  }
  Result<ExternalStatus> status(const SlotId& slot, const std::string&) override {
    auto it = started_.find(slot.time);
    if (it == started_.end()) return ExternalStatus::kSubmitted;
    if (now_ >= it->second + plan_.run.at(slot.time)) return ExternalStatus::kSuccess;
    return ExternalStatus::kRunning;
  }
  Result<void> kill(const SlotId&, const std::string&) override { return {}; }
  std::string describe() const override { return "planned"; }
  // When the jobs started so far end, those strictly between `after` and `until` (the
  // periodic steps at those times see the others).
  std::vector<Time> ends_between(Time after, Time until) const {
    return {ends_.upper_bound(after), ends_.lower_bound(until)};
  }
  std::string_view kind() const override { return "command"; }

 private:
  const Plan& plan_;
  const Time& now_;
  std::map<Time, Time> started_;
  std::multiset<Time> ends_;  // of the jobs started
};

// The first AT_RISK and the MISSED of every slot, as the step stored them.
struct Outcomes final : SchedulerListener {
  std::map<SlotId, Time> at_risk;           // when first flagged
  std::map<SlotId, SlotStatus> flagged_as;  // the slot's status then
  std::map<SlotId, Time> deadline;
  std::map<SlotId, std::string> reasons;
  std::map<SlotId, SlotStatus> missed;  // the slot's status when it was judged MISSED
  void on_slot_changes(const std::vector<SlotChange>& changes) override {
    for (const SlotChange& c : changes) {
      if (c.to.deadline) deadline[c.to.id] = *c.to.deadline;
      const auto before = c.from ? c.from->deadline_state : std::nullopt;
      if (c.to.deadline_state == before) continue;
      if (c.to.deadline_state == DeadlineState::kAtRisk && at_risk.emplace(c.to.id, c.at).second) {
        flagged_as[c.to.id] = c.to.status;
        reasons[c.to.id] = c.deadline_reason;
      }
      if (c.to.deadline_state == DeadlineState::kMissed) missed[c.to.id] = c.to.status;
    }
  }
};

// WAITING 0, READY 1, RUNNING 2, any other 3 (the figures' arrays).
int status_index(SlotStatus s) {
  switch (s) {
    case SlotStatus::kWaiting:
      return 0;
    case SlotStatus::kReady:
      return 1;
    case SlotStatus::kRunning:
      return 2;
    default:
      return 3;
  }
}

ReplayFigures count(const Outcomes& o, Time from, Time to) {
  ReplayFigures f;
  for (const auto& [id, deadline] : o.deadline) {
    if (id.time < from || id.time >= to) continue;
    ++f.slots;
    const auto miss = o.missed.find(id);
    const bool missed = miss != o.missed.end();
    auto flag = o.at_risk.find(id);
    const bool flagged = flag != o.at_risk.end();
    const bool in_time = flagged && flag->second <= deadline - minutes(15);
    if (missed) {
      ++f.missed;
      ++(in_time ? f.missed_flagged : flagged ? f.missed_flagged_late : f.missed_never_flagged);
      if (!in_time) ++f.unflagged_by_status[status_index(miss->second)];
    }
    if (flagged) {
      ++f.flagged;
      if (!missed) ++f.flagged_on_time;
      if (!missed && !in_time) ++f.flagged_on_time_late;
      const int k = status_index(o.flagged_as.at(id));
      ++f.flagged_by_status[k];
      if (!missed) ++f.on_time_by_status[k];
    }
  }
  return f;
}

// One line per slot flagged AT_RISK (replay.h, flags_file).
void write_flags(const std::string& path, const Outcomes& o, const std::vector<Plan>& plans) {
  FILE* out = std::fopen(path.c_str(), "w");
  if (!out) return spdlog::error("replay: cannot write {}", path);
  const auto min = [](auto d) { return std::chrono::duration<double>(d).count() / 60; };
  for (const auto& [id, flagged] : o.at_risk) {
    const Plan& plan = plans[std::size_t(std::atoi(id.workflow.c_str() + 7))];  // replay-NNN
    const Time deadline = o.deadline.at(id);
    std::fprintf(out, "%s %s %s %s %.0f %.1f %.1f %.0f %s\n", id.workflow.c_str(),
                 format_time(id.time).c_str(), std::string(to_string(o.flagged_as.at(id))).c_str(),
                 o.missed.count(id) ? "MISSED" : "MET", min(deadline - flagged),
                 min(plan.ready_at.at(id.time) - flagged), min(plan.run.at(id.time)),
                 min(deadline - id.time), o.reasons.at(id).c_str());
  }
  std::fclose(out);
}

using Services = std::vector<std::pair<std::string, std::shared_ptr<PlannedService>>>;

// The partial steps celos-server runs at jobs' ends between two periodic steps (after, until):
// each ending job's workflow, at the time it ended, twice (the first sees the job end, the
// second submits into the place it freed, as the event stepper wakes a workflow whose job
// ended). Sets `now` (the services read it). Returns the number of steps.
long step_job_ends(Scheduler& scheduler, const Services& services, Time after, Time until,
                   Time& now) {
  std::vector<std::pair<Time, std::string>> ends;
  for (const auto& [id, service] : services) {
    for (Time t : service->ends_between(after, until)) ends.emplace_back(t, id);
  }
  std::sort(ends.begin(), ends.end());
  long steps = 0;
  for (const auto& [t, id] : ends) {
    now = t;
    for (int k = 0; k < 2; ++k, ++steps) scheduler.step(now, std::set<std::string>{id});
  }
  now = until;
  return steps;
}

}  // namespace

ReplayFigures run_replay(const ReplayOptions& options) {
  spdlog::set_level(spdlog::level::warn);
  std::mt19937_64 rng(options.seed);
  const int hours = (options.days + 2) * 24;
  std::vector<Plan> plans;
  for (int i = 0; i < options.workflows; ++i) plans.push_back(draw_plan(rng, hours));
  Time now = kEpoch;
  auto fs = std::make_shared<testing::MemFileSystem>();
  auto db = make_file_state_database(fs, "/db");
  testing::FakeFileSystemResolver resolver{fs};
  auto config = std::make_shared<WorkflowConfig>();
  std::uniform_int_distribution<int> deadline_minutes(90, 150);
  Services services;
  for (int i = 0; i < options.workflows; ++i) {
    Workflow w;
    w.id = fmt::format("replay-{:03}", i);
    w.schedule = make_hourly_schedule();
    w.strategy = make_serial_strategy(2);
    w.trigger = std::make_shared<PlannedTrigger>(plans[std::size_t(i)]);
    auto service = std::make_shared<PlannedService>(plans[std::size_t(i)], now);
    services.emplace_back(w.id, service);
    w.service = service;
    w.start_time = kEpoch;
    w.deadline = DeadlineRule{};
    w.deadline->after = minutes(deadline_minutes(rng));
    config->workflows[w.id] = w;
  }
  auto source = make_static_workflow_source(config);
  Scheduler scheduler(*source, *db, resolver);
  Outcomes outcomes;
  scheduler.add_listener(outcomes);
  std::vector<double> took;
  long event_steps = 0;
  const Time end = kEpoch + std::chrono::hours(24 * (options.days + 1)) + std::chrono::hours(6);
  const auto period = minutes(options.step_minutes);
  for (; now <= end; now += period) {
    if (options.job_events && now > kEpoch) {
      event_steps += step_job_ends(scheduler, services, now - period, now, now);
    }
    const auto t0 = std::chrono::steady_clock::now();
    scheduler.step(now);
    took.push_back(ms_since(t0));
  }
  const Time counted = kEpoch + std::chrono::hours(24);
  ReplayFigures f = count(outcomes, counted, counted + std::chrono::hours(24 * options.days));
  if (!options.flags_file.empty()) write_flags(options.flags_file, outcomes, plans);
  f.steps = static_cast<long>(took.size());
  f.event_steps = event_steps;
  std::sort(took.begin(), took.end());
  f.step_ms_median = took[took.size() / 2];
  f.step_ms_worst = took.back();
  return f;
}

}  // namespace celos::bench
