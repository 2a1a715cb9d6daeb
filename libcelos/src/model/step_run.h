// What one scheduler step keeps per workflow and per group of jobs while it runs
// (model/step.cc): the loaded slots, the answers of the concurrent tasks, the changes.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/external_service.h"
#include "celos/scheduler.h"
#include "celos/workflow.h"

namespace celos::detail {

// Everything one workflow does in one step. Tasks of the executor touch only their own
// WorkflowRun (or disjoint entries of its vectors); the step's thread reads them between
// batches.
struct WorkflowRun {
  const Workflow* wf = nullptr;
  bool active = false;                     // loaded (not paused, no error)
  std::vector<std::string> errors;         // reported by the step's thread
  std::vector<SlotState> slots;            // loaded and not final, oldest first
  std::map<SlotStatus, int> final_counts;  // the loaded final slots, counted
  std::vector<bool> stored;                // per slot: was it stored (or is it a new WAITING one)
  std::set<Time> marked;                   // times carried by a rerun marker
  std::vector<SlotState> picks;            // the strategy's picks (live first), to submit
  std::string limit_key;                   // its endpoint, when celos.serviceLimits applies
  int reserved = 0;                        // tokens of that endpoint reserved for its picks
  std::vector<SlotState> running;          // picks submitted in this step, as RUNNING
  std::vector<SlotChange> changes;         // the other changes of this step
  std::vector<std::optional<Result<bool>>> triggers;  // per slot, WAITING ones: ready?
  std::vector<int> remote_checks;  // per WAITING slot: remote paths asked (-1: backing off)
  std::vector<std::optional<Result<ExternalStatus>>> statuses;  // per slot, RUNNING ones
  std::vector<SlotState> restart;  // RUNNING slots whose job was never started
  std::vector<SlotId> follow;      // RUNNING slots to mark (see kFollowMargin)

  void error(std::string message) {
    spdlog::warn("workflow {}: {}", wf->id, message);
    errors.push_back(fmt::format("{}: {}", wf->id, std::move(message)));
  }
  // The stored state of slot `t` as loaded, if it was stored.
  std::optional<SlotState> from(Time t) const {
    auto it = std::lower_bound(slots.begin(), slots.end(), t,
                               [](const SlotState& s, Time x) { return s.id.time < x; });
    if (it == slots.end() || it->id.time != t || !stored[std::size_t(it - slots.begin())]) {
      return std::nullopt;
    }
    return *it;
  }
};

// The schedule's times in the sliding window [max(now - 7 days, startTime), now) plus the slots
// marked for rerun, with their stored states (WAITING where nothing is stored), into
// run.slots, oldest first. Final slots never move and the strategy only looks at READY and
// RUNNING ones: they are only counted (run.final_counts), so that a step of 10,000 workflows
// neither holds nor copies 1.7 million slot states. (step_run.cc)
Result<void> load_window(WorkflowRun& run, StateDatabase& db, Time now,
                         const ScheduleContext& context);

// The strategy's picks in two lanes (issue 29): first the live slots (no backfill plan), with
// every RUNNING slot counted; then, with the capacity they left, the READY slots of the running
// backfill plans `running_backfills`. A slot of a plan that is not running is never picked.
// Live picks come first in the result. (step_run.cc)
std::vector<SlotState> pick_with_lanes(const SchedulingStrategy& strategy,
                                       const std::vector<SlotState>& slots,
                                       const std::set<std::string>& running_backfills);

// Adds the run's slots by status to `counts`: as loaded, with the step's own changes (later
// ones win) on top. (step_run.cc)
void count_slots(const WorkflowRun& run, std::map<SlotStatus, int>& counts);

// Jobs of one service endpoint (batching services) or of one workflow (the others), asked in
// one task.
struct JobGroup {
  ExternalService* service = nullptr;
  std::vector<ExternalService::Job> jobs;
  std::vector<std::pair<WorkflowRun*, std::size_t>> targets;  // run and slot index per job
};

inline std::string group_key(const ExternalService& service, const Workflow& wf, bool batches) {
  if (batches) return fmt::format("{}|{}", service.kind(), service.endpoint());
  return "workflow|" + wf.id;
}

// The groups cut into batches of at most the service's traits().status_batch_limit jobs, so that
// the batches of one endpoint are asked concurrently.
inline std::vector<JobGroup> split_batches(std::map<std::string, JobGroup> groups) {
  std::vector<JobGroup> out;
  for (auto& entry : groups) {
    JobGroup& group = entry.second;
    const std::size_t limit = group.service->traits().status_batch_limit;
    if (limit == 0 || group.jobs.size() <= limit) {
      out.push_back(std::move(group));
      continue;
    }
    for (std::size_t from = 0; from < group.jobs.size(); from += limit) {
      const std::size_t to = std::min(group.jobs.size(), from + limit);
      JobGroup batch;
      batch.service = group.service;
      batch.jobs.assign(group.jobs.begin() + std::ptrdiff_t(from),
                        group.jobs.begin() + std::ptrdiff_t(to));
      batch.targets.assign(group.targets.begin() + std::ptrdiff_t(from),
                           group.targets.begin() + std::ptrdiff_t(to));
      out.push_back(std::move(batch));
    }
  }
  return out;
}

}  // namespace celos::detail
