// The summary of a simulation: slots per final state and per workflow, wait and run times, the
// slots still waiting at the end with their trigger trees, and the expectations.
#include <fmt/format.h>

#include "sim/report.h"

namespace celos::sim {
namespace {

constexpr SlotStatus kColumns[] = {
    SlotStatus::kSuccess, SlotStatus::kFailure, SlotStatus::kWaitTimeout, SlotStatus::kKilled,
    SlotStatus::kRunning, SlotStatus::kReady,   SlotStatus::kWaiting};

struct WorkflowSummary {
  std::string id;
  std::map<SlotStatus, std::int64_t> counts = {};
  std::int64_t slots = 0;
  WorkflowTimes times = {};
  std::vector<std::pair<SlotState, std::optional<TriggerStatus>>> waiting = {};  // shown ones
  std::int64_t more_waiting = 0;
};

std::vector<WorkflowSummary> summarize(World& world, const RunFacts& facts,
                                       const SimulateOptions& options) {
  std::vector<WorkflowSummary> out;
  for (const auto& [id, wf] : world.scheduler.config()->workflows) {
    if (!options.only.empty() && !glob_match(options.only, id)) continue;
    WorkflowSummary w{id};
    if (auto t = world.timeline.times().find(id); t != world.timeline.times().end()) {
      w.times = t->second;
    }
    auto slots = world.scheduler.workflow_slots(id, world.scenario.start, facts.last);
    if (slots) {
      for (auto s = slots->rbegin(); s != slots->rend(); ++s) {  // oldest first
        ++w.counts[s->status];
        ++w.slots;
        if (s->status != SlotStatus::kWaiting) continue;
        if (w.waiting.size() >= options.waiting_shown) {
          ++w.more_waiting;
          continue;
        }
        auto tree = world.scheduler.trigger_status(id, s->id.time, facts.last);
        w.waiting.emplace_back(*s, tree ? std::optional(*tree) : std::nullopt);
      }
    }
    out.push_back(std::move(w));
  }
  return out;
}

std::string seconds_text(const Durations& d) {
  if (d.count == 0) return "-";
  return fmt::format("{}/{}", d.total_ms / d.count / 1000, d.max_ms / 1000);
}

void status_tree_text(const TriggerStatus& t, int depth, std::string& out) {
  out += fmt::format("{:{}}- {} {}: {}\n", "", depth * 2 + 6, t.ready ? "ready" : "not ready",
                     t.type, t.description);
  for (const TriggerStatus& sub : t.sub_statuses) status_tree_text(sub, depth + 1, out);
}

std::string tree_json(const TriggerStatus& t) {
  std::string subs;
  for (const TriggerStatus& sub : t.sub_statuses)
    subs += (subs.empty() ? "" : ",") + tree_json(sub);
  return fmt::format(R"({{"type":{},"ready":{},"description":{},"subStatuses":[{}]}})",
                     json_quote(t.type), t.ready, json_quote(t.description), subs);
}

void write_summary_text(const std::vector<WorkflowSummary>& ws, World& world, const RunFacts& facts,
                        const Expectations& expectations, std::ostream& out) {
  out << fmt::format("simulated {} .. {} (step {} s): {} steps, {} workflows, {} slot changes\n",
                     format_time(facts.first), format_time(facts.last), world.scenario.step.count(),
                     facts.steps, ws.size(), world.timeline.changes());
  out << fmt::format("{:<32} {:>6}", "WORKFLOW", "SLOTS");
  for (SlotStatus s : kColumns) out << fmt::format(" {:>8}", to_string(s).substr(0, 8));
  out << fmt::format(" {:>13} {:>13}\n", "WAIT s avg/max", "RUN s avg/max");
  for (const WorkflowSummary& w : ws) {
    out << fmt::format("{:<32} {:>6}", w.id, w.slots);
    for (SlotStatus s : kColumns) {
      const auto it = w.counts.find(s);
      out << fmt::format(" {:>8}", it == w.counts.end() ? 0 : it->second);
    }
    out << fmt::format(" {:>13} {:>13}\n", seconds_text(w.times.wait), seconds_text(w.times.run));
  }
  std::string waiting;
  for (const WorkflowSummary& w : ws) {
    for (const auto& [slot, tree] : w.waiting) {
      waiting += fmt::format("  {}\n", to_string(slot.id));
      if (tree) status_tree_text(*tree, 0, waiting);
    }
    if (w.more_waiting > 0)
      waiting += fmt::format("  ... and {} more of {}\n", w.more_waiting, w.id);
  }
  if (!waiting.empty()) out << "still waiting at the end, and why:\n" << waiting;
  if (world.timeline.step_errors() > 0) {
    out << fmt::format("step errors: {} (the first: {})\n", world.timeline.step_errors(),
                       world.timeline.first_step_error());
  }
  for (const std::string& note : facts.notes) out << "note: " << note << '\n';
  for (const ExpectResult& r : expectations.results()) {
    out << fmt::format("{} {}: {}\n",
                       !r.checked ? "SKIP"
                       : r.passed ? "PASS"
                                  : "FAIL",
                       r.spec->field, r.message);
  }
}

void write_summary_json(const std::vector<WorkflowSummary>& ws, World& world, const RunFacts& facts,
                        const Expectations& expectations, std::ostream& out) {
  out << fmt::format(R"({{"start":"{}","last":"{}","stepSeconds":{},"steps":{},"changes":{},)",
                     format_time(facts.first), format_time(facts.last), world.scenario.step.count(),
                     facts.steps, world.timeline.changes());
  out << fmt::format(R"("stepErrors":{},"workflows":[)", world.timeline.step_errors());
  for (std::size_t i = 0; i < ws.size(); ++i) {
    const WorkflowSummary& w = ws[i];
    std::string states, waiting;
    for (const auto& [s, n] : w.counts) {
      states += fmt::format("{}\"{}\":{}", states.empty() ? "" : ",", to_string(s), n);
    }
    for (const auto& [slot, tree] : w.waiting) {
      waiting += fmt::format(R"({}{{"slot":"{}","trigger":{}}})", waiting.empty() ? "" : ",",
                             format_time(slot.id.time), tree ? tree_json(*tree) : "null");
    }
    const auto durations = [](const Durations& d) {
      return fmt::format(R"({{"count":{},"meanSeconds":{},"maxSeconds":{}}})", d.count,
                         d.count ? d.total_ms / d.count / 1000 : 0, d.max_ms / 1000);
    };
    out << fmt::format(
        R"({}{{"id":{},"slots":{},"states":{{{}}},"wait":{},"run":{},"waiting":[{}],"moreWaiting":{}}})",
        i ? "," : "", json_quote(w.id), w.slots, states, durations(w.times.wait),
        durations(w.times.run), waiting, w.more_waiting);
  }
  out << R"(],"expectations":[)";
  bool first = true;
  for (const ExpectResult& r : expectations.results()) {
    out << fmt::format(R"({}{{"field":{},"checked":{},"passed":{},"message":{}}})",
                       first ? "" : ",", json_quote(r.spec->field), r.checked, r.passed,
                       json_quote(r.message));
    first = false;
  }
  out << "]}\n";
}

}  // namespace

void write_summary(World& world, const RunFacts& facts, const Expectations& expectations,
                   const SimulateOptions& options, std::ostream& out) {
  const auto ws = summarize(world, facts, options);
  if (options.json) {
    write_summary_json(ws, world, facts, expectations, out);
  } else {
    write_summary_text(ws, world, facts, expectations, out);
  }
}

}  // namespace celos::sim
