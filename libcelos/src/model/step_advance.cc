// Phase 3 of the step (step_phases.h): the status of every RUNNING slot and the trigger of
// every WAITING slot, asked concurrently; then each slot moves on. Before the triggers, a probe
// tells which directories to list (model/data_checks.h), and slots whose data checks back off
// (model/data_check_memory.h) are not asked. Long-running slots near the window's end are kept
// in view with rerun markers.
#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "model/data_check_memory.h"
#include "model/data_checks.h"
#include "model/step_phases.h"

namespace celos::detail {
namespace {

// A RUNNING slot this close to leaving the 7-day window gets a rerun marker, which keeps it in
// the step's view until it is final (SPEC §4: a running job is followed wherever it is in
// time; a marker of a slot that is not final does not expire). Two days of margin cover a
// scheduler that was down for a while.
constexpr auto kFollowMargin = std::chrono::hours(48);

// One slot's evaluation: counts the paths it asks on file systems of round trips, whose checks
// back off (DataCheckMemory).
class RemoteCheckCounter final : public ForwardingTriggerContext {
 public:
  explicit RemoteCheckCounter(StepTriggerContext& step)
      : ForwardingTriggerContext(step), step_(step) {}
  Result<bool> path_exists(const std::string& fs_uri, const std::string& path) override {
    if (step_.remote(fs_uri)) ++remote;
    return ForwardingTriggerContext::path_exists(fs_uri, path);
  }
  int remote = 0;

 private:
  StepTriggerContext& step_;
};

// WAITING slots are evaluated in chunks: enough tasks to overlap the data checks of a workflow
// with many late slots, few enough that a first step of 168 slots per workflow is not drowned
// in task overhead.
constexpr std::size_t kTriggerChunk = 16;

}  // namespace

void Step::advance() {
  std::map<std::string, JobGroup> groups;
  std::vector<Chunk> chunks;
  for (WorkflowRun& run : runs_) {
    if (!run.active) continue;
    run.triggers.resize(run.slots.size());
    run.statuses.resize(run.slots.size());
    run.remote_checks.assign(run.slots.size(), 0);
    std::vector<std::size_t> waiting;
    for (std::size_t i = 0; i < run.slots.size(); ++i) {
      const SlotState& s = run.slots[i];
      if (s.status == SlotStatus::kRunning && s.external_id) {
        follow(run, s);
        const ExternalService& service = *run.wf->service;
        JobGroup& g = groups[group_key(service, *run.wf, service.traits().batches_status)];
        g.service = run.wf->service.get();
        g.jobs.push_back({s.id, *s.external_id});
        g.targets.push_back({&run, i});
      } else if (s.status == SlotStatus::kWaiting && !backing_off(s)) {
        waiting.push_back(i);
      }
    }
    add_waiting(run, waiting, chunks);
  }
  probe_paths(chunks);
  // The directories to list first: the executor starts tasks in order.
  std::vector<std::function<void()>> tasks = triggers_.listing_tasks();
  for (const Chunk& chunk : chunks) tasks.push_back([this, &chunk] { evaluate(chunk); });
  std::vector<JobGroup> batches = split_batches(std::move(groups));
  for (JobGroup& group : batches) tasks.push_back([this, &group] { ask_status(group); });
  // The markers of the running slots near the window's end are written while the calls run.
  tasks.push_back([this] {
    const auto started = env_.clock.monotonic();
    mark_followed();
    follow_busy_ =
        std::chrono::duration_cast<std::chrono::milliseconds>(env_.clock.monotonic() - started);
  });
  env_.executor.run_all(std::move(tasks));
  remember_checks();
  for (WorkflowRun& run : runs_) {
    if (run.active) isolated(run, [&] { advance_slots(run); });
  }
}

void Step::add_waiting(WorkflowRun& run, const std::vector<std::size_t>& waiting,
                       std::vector<Chunk>& chunks) {
  std::vector<std::size_t> due;
  for (std::size_t i : waiting) {
    std::optional<int> deferred;
    if (env_.data_checks != nullptr) deferred = env_.data_checks->deferred(run.slots[i].id, now_);
    if (!deferred) {
      due.push_back(i);
      continue;
    }
    run.triggers[i] = Result<bool>(false);  // as last checked (it may still time out)
    run.remote_checks[i] = -1;
    checks_deferred_ += *deferred;
  }
  for (std::size_t from = 0; from < due.size(); from += kTriggerChunk) {
    const auto to = std::min(due.size(), from + kTriggerChunk);
    chunks.emplace_back(&run,
                        std::vector<std::size_t>(due.begin() + static_cast<std::ptrdiff_t>(from),
                                                 due.begin() + static_cast<std::ptrdiff_t>(to)));
  }
}

void Step::probe_paths(const std::vector<Chunk>& chunks) {
  if (chunks.empty()) return;
  std::vector<std::vector<PathKey>> asked(chunks.size());
  std::vector<std::function<void()>> tasks;
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    tasks.push_back([this, &chunks, &asked, k] {
      PathProbe probe(triggers_);
      const auto& [run, slots] = chunks[k];
      bool looked = false;
      for (std::size_t i : slots) {
        try {
          (void)run->wf->trigger->evaluate(run->slots[i].id.time, probe);
        } catch (const std::exception&) {  // the evaluation proper reports it
        }
        // A trigger's file systems are the same for every slot: when the first paths it asks
        // are on none that lists, the rest of the chunk's would not be listed either.
        if (!looked && !probe.asked.empty()) {
          looked = true;
          if (!any_listing(probe.asked)) return;
        }
      }
      asked[k] = std::move(probe.asked);
    });
  }
  env_.executor.run_all(std::move(tasks));
  std::vector<PathKey> all;
  for (auto& a : asked) all.insert(all.end(), a.begin(), a.end());
  triggers_.plan_listings(all);
}

bool Step::any_listing(const std::vector<PathKey>& asked) {
  return std::any_of(asked.begin(), asked.end(),
                     [this](const PathKey& p) { return triggers_.remote(p.first); });
}

void Step::evaluate(const Chunk& chunk) {
  auto& [run, slots] = chunk;
  for (std::size_t i : slots) {
    try {
      RemoteCheckCounter context(triggers_);
      // Only "ready?" is kept: the status trees of 1.7 million slots would not fit.
      auto status = run->wf->trigger->evaluate(run->slots[i].id.time, context);
      run->triggers[i] =
          status ? Result<bool>(status->ready) : Result<bool>(tl::unexpected(status.error()));
      run->remote_checks[i] = context.remote;
    } catch (const std::exception& e) {
      run->triggers[i] = fail(fmt::format("trigger failed: {}", e.what()));
    }
  }
}

void Step::remember_checks() {
  if (env_.data_checks == nullptr || !env_.data_checks->backs_off()) return;
  for (WorkflowRun& run : runs_) {
    if (!run.active) continue;
    std::vector<CheckOutcome> outcomes;
    for (std::size_t i = 0; i < run.slots.size(); ++i) {
      if (run.slots[i].status != SlotStatus::kWaiting) continue;
      CheckOutcome o;
      o.slot = run.slots[i].id.time;
      const auto& ready = run.triggers[i];
      if (run.remote_checks[i] < 0 || !ready || !*ready) {  // backing off, not asked, failed
        o.kind = CheckOutcome::Kind::kKept;
      } else if (!**ready && run.remote_checks[i] > 0) {
        o.kind = CheckOutcome::Kind::kMissing;
        o.paths = run.remote_checks[i];
      }
      outcomes.push_back(o);
    }
    env_.data_checks->update(run.wf->id, outcomes, now_);
  }
}

void Step::ask_status(JobGroup& group) {
  auto answers = call(*group.service, fmt::format("status of {} jobs", group.jobs.size()),
                      [&]() -> Result<std::map<std::string, Result<ExternalStatus>>> {
                        return group.service->status_many(group.jobs);
                      });
  for (std::size_t i = 0; i < group.jobs.size(); ++i) {
    auto [run, index] = group.targets[i];
    Result<ExternalStatus> r = fail("no answer for job " + group.jobs[i].external_id);
    if (!answers) {
      r = tl::unexpected(answers.error());
    } else if (auto it = answers->find(group.jobs[i].external_id); it != answers->end()) {
      r = it->second;
    }
    run->statuses[index] = std::move(r);  // disjoint entries: no lock needed
  }
}

void Step::advance_slots(WorkflowRun& run) {
  for (std::size_t i = 0; i < run.slots.size(); ++i) {
    const SlotState& slot = run.slots[i];
    std::optional<SlotState> next;
    if (slot.status == SlotStatus::kWaiting && run.triggers[i]) {
      next = advance_waiting(run, slot, *run.triggers[i]);
    } else if (slot.status == SlotStatus::kRunning) {
      next = advance_running(run, slot, run.statuses[i]);
    }
    if (next && *next != slot) run.changes.push_back({run.from(slot.id.time), *next, now_, "step"});
  }
}

std::optional<SlotState> Step::advance_waiting(WorkflowRun& run, const SlotState& slot,
                                               const Result<bool>& ready) {
  if (!ready) {
    run.error(
        fmt::format("trigger of slot {}: {}", format_time(slot.id.time), ready.error().message));
    return std::nullopt;
  }
  if (*ready) return slot.ready().value();
  if (now_ > slot.id.time + std::chrono::seconds(run.wf->wait_timeout_seconds)) {
    return slot.wait_timeout().value();
  }
  return std::nullopt;
}

std::optional<SlotState> Step::advance_running(
    WorkflowRun& run, const SlotState& slot, const std::optional<Result<ExternalStatus>>& status) {
  const Workflow& wf = *run.wf;
  if (!slot.external_id) {  // cannot ask: a broken record
    return failed_attempt(wf, slot, "RUNNING without an external id", now_);
  }
  if (!status) return std::nullopt;
  if (!*status) {
    run.error(fmt::format("status of slot {} ({}): {}", format_time(slot.id.time),
                          *slot.external_id, status->error().message));
    return std::nullopt;
  }
  switch ((*status)->state) {
    case JobState::kSuccess: {
      // Datasets: the done flags are written before SUCCESS is stored.
      if (auto flagged = datasets_.before_success(wf, slot); !flagged) {
        run.error(fmt::format("slot {} stays RUNNING: {}", format_time(slot.id.time),
                              flagged.error().message));
        return std::nullopt;
      }
      return slot.success().value();
    }
    case JobState::kFailure: {
      std::string why = (*status)->message.empty() ? fmt::format("job {} failed", *slot.external_id)
                                                   : (*status)->message;
      SlotState next = failed_attempt(wf, slot, std::move(why), now_);
      if (next.status == SlotStatus::kFailure) datasets_.after_failure(wf, next);
      return next;
    }
    case JobState::kSubmitted:
      spdlog::info("slot {}: job {} was recorded but never started: starting it",
                   to_string(slot.id), *slot.external_id);
      run.restart.push_back(slot);
      return std::nullopt;
    case JobState::kRunning:
      // Running with something to say (a Kubernetes pod that no node takes): the slot stays
      // RUNNING and keeps the latest reason as its message.
      if (!(*status)->message.empty() && slot.message != (*status)->message) {
        SlotState next = slot;
        next.message = (*status)->message;
        return next;
      }
      return std::nullopt;
  }
  return std::nullopt;
}

void Step::follow(WorkflowRun& run, const SlotState& slot) {
  if (run.marked.count(slot.id.time)) return;
  if (slot.id.time >= now_ - kSlidingWindow + kFollowMargin) return;
  run.follow.push_back(slot.id);
}

void Step::mark_followed() {
  std::vector<SlotId> all;
  for (WorkflowRun& run : runs_) all.insert(all.end(), run.follow.begin(), run.follow.end());
  if (all.empty()) return;
  const bool grouped = env_.db.mark_reruns(all, now_).has_value();
  for (WorkflowRun& run : runs_) {
    if (run.follow.empty()) continue;
    auto marked = grouped ? Result<void>{} : env_.db.mark_reruns(run.follow, now_);
    if (!marked) {
      run.error(fmt::format("cannot keep running slots in view: {}", marked.error().message));
      continue;
    }
    for (const SlotId& id : run.follow) run.marked.insert(id.time);
  }
}

}  // namespace celos::detail
