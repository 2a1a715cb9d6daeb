// The step's part of celos.serviceLimits (celos/service_limits.h): with limits declared, every
// workflow is loaded and picked first, then each limited endpoint's capacity (maxConcurrent
// minus its RUNNING slots, and the tokens of submitsPerSecond) is shared among the picks of its
// workflows, live ones first; the picks cut off stay READY for a later step.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/step_phases.h"

namespace celos::detail {

void Step::load_all() {
  std::vector<std::function<void()>> tasks;
  for (WorkflowRun& run : runs_) {
    tasks.emplace_back([this, &run] { isolated(run, [&] { load_and_pick(run); }); });
  }
  env_.executor.run_all(std::move(tasks));
}

namespace {

// One limited endpoint's workflows in this step.
struct EndpointShare {
  const ServiceLimits* limits = nullptr;
  int running = 0;                    // its RUNNING slots among the loaded workflows
  std::vector<WorkflowRun*> picking;  // its workflows with picks
};

std::size_t live_picks(const WorkflowRun& run) {
  std::size_t live = 0;
  while (live < run.picks.size() && !run.picks[live].backfill) ++live;
  return live;
}

}  // namespace

void Step::admit_limited() {
  std::map<std::string, EndpointShare> endpoints;
  std::set<std::string> stepped;
  for (WorkflowRun& run : runs_) {
    stepped.insert(run.wf->id);
    if (!run.active) continue;
    std::string key = run.wf->service->limit_endpoint();
    auto limits = config_.service_limits.find(key);
    if (limits == config_.service_limits.end()) continue;
    EndpointShare& share = endpoints[key];
    share.limits = &limits->second;
    for (const SlotState& s : run.slots) share.running += s.status == SlotStatus::kRunning;
    if (!run.picks.empty()) share.picking.push_back(&run);
    run.limit_key = std::move(key);
  }
  // A full step sees every workflow itself; a partial one asks the book for the others.
  const auto elsewhere = runs_.size() == config_.workflows.size()
                             ? std::optional<std::map<std::string, int>>(std::in_place)
                             : env_.limiter->running_elsewhere(stepped);
  for (auto& [key, share] : endpoints) {
    std::vector<std::pair<std::size_t, std::size_t>> wants;
    std::size_t total = 0;
    for (const WorkflowRun* run : share.picking) {
      const std::size_t live = live_picks(*run);
      wants.emplace_back(live, run->picks.size() - live);
      total += run->picks.size();
    }
    if (total == 0) continue;
    std::size_t capacity = total;
    if (const auto& max = share.limits->max_concurrent) {
      // Before the first full step the other workflows' RUNNING slots are unknown: wait.
      const int others = elsewhere ? (elsewhere->count(key) ? elsewhere->at(key) : 0) : *max;
      capacity = std::min<std::size_t>(total, std::max(0, *max - share.running - others));
      if (capacity < total) {
        report_.limit_deferred[{key, ServiceLimit::kMaxConcurrent}] += int(total - capacity);
      }
    }
    if (const auto& rate = share.limits->submits_per_second; rate && capacity > 0) {
      const auto tokens = std::size_t(env_.limiter->reserve(key, *rate, int(capacity), now_));
      if (tokens < capacity) {
        report_.limit_deferred[{key, ServiceLimit::kSubmitsPerSecond}] += int(capacity - tokens);
      }
      capacity = tokens;
    }
    const std::vector<std::size_t> granted = share_capacity(wants, capacity);
    for (std::size_t i = 0; i < share.picking.size(); ++i) {
      WorkflowRun& run = *share.picking[i];
      run.picks.resize(granted[i]);
      if (share.limits->submits_per_second) run.reserved = int(granted[i]);
    }
  }
}

void Step::spend_token(WorkflowRun& run) {
  if (run.reserved == 0) return;
  --run.reserved;
  env_.limiter->spend(run.limit_key, step_clock());
}

void Step::release_tokens(WorkflowRun& run) {
  if (run.reserved == 0) return;
  env_.limiter->release(run.limit_key, run.reserved);
  run.reserved = 0;
}

void Step::record_running_book(const std::map<std::string, int>& running) {
  if (env_.limiter == nullptr) return;
  if (!limited()) return env_.limiter->forget_running();
  ServiceLimiter::RunningBook book;
  for (const WorkflowRun& run : runs_) {
    auto it = running.find(run.wf->id);
    if (it == running.end()) continue;
    book[run.wf->id] = {run.limit_key.empty() ? run.wf->service->limit_endpoint() : run.limit_key,
                        it->second};
  }
  env_.limiter->record_running(std::move(book), runs_.size() == config_.workflows.size());
}

}  // namespace celos::detail
