#include "model/step.h"

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "model/retry_backoff.h"
#include "model/step_phases.h"

namespace celos::detail {
namespace {

// The submit/record/start pipeline cuts the workflows into at most kPipelineParts parts of at
// least kPipelinePartMin: a part's records are one durable write (two syncfs), so parts stay
// few; small steps are one part (submit all, record all, start all).
constexpr std::size_t kPipelineParts = 8;
constexpr std::size_t kPipelinePartMin = 128;

// A READY pick that is not submitted after all (mode new: its data went to another slot)
// waits again, saying why.
SlotState waiting_again(const SlotState& pick, std::string why) {
  SlotState back = pick;
  back.status = SlotStatus::kWaiting;
  back.external_id.reset();
  back.consumed.clear();
  back.message = std::move(why);
  return back;
}

}  // namespace

void Step::run(const std::optional<std::set<std::string>>& ids) {
  for (const auto& [id, workflow] : config_.workflows) {
    if (ids && !ids->count(id)) continue;
    runs_.push_back(WorkflowRun{});
    runs_.back().wf = &workflow;
  }
  timed("prefetch", [&] { prefetch(); });
  if (limited()) {
    timed("load", [&] { load_all(); });
    admit_limited();
  }
  // A step that lost the lease (fence_) stops after the phase that found out.
  submit_record_start();
  if (!fence_.lost()) timed("advance", [&] { advance(); });
  report_.phases.emplace_back("follow", follow_busy_);  // during advance
  if (!fence_.lost()) timed("restart", [&] { start_jobs(restart_of); });
  if (!fence_.lost()) timed("deadlines", [&] { check_deadlines(); });
  if (!fence_.lost()) timed("write", [&] { write_changes(); });
  finish_report();
}

void Step::submit_record_start() {
  const std::size_t n = runs_.size();
  const std::size_t parts = std::clamp<std::size_t>(n / kPipelinePartMin, 1, kPipelineParts);
  auto first = [&](std::size_t k) { return k * n / parts; };
  StageClock submitting(env_.clock), recording(env_.clock), starting(env_.clock);
  for (std::size_t k = 0; k < parts + 2 && !fence_.lost(); ++k) {
    std::vector<std::function<void()>> tasks;
    std::map<std::string, JobGroup> groups;
    std::vector<SlotChange> committed;
    if (k < parts) {
      for (std::size_t i = first(k); i < first(k + 1); ++i) {
        tasks.push_back(submitting.timed(
            [this, i] { isolated(runs_[i], [&] { load_and_submit(runs_[i]); }); }));
      }
    }
    if (k >= 1 && k <= parts) {
      tasks.push_back(recording.timed([this, &committed, from = first(k - 1), to = first(k)] {
        committed = record_running(from, to);
      }));
    }
    if (k >= 2) {
      add_start_tasks(first(k - 2), first(k - 1), running_of, false, groups, tasks, starting);
    }
    env_.executor.run_all(std::move(tasks));
    for (StageClock* c : {&submitting, &recording, &starting}) c->end_round();
    notify(committed);
  }
  std::map<std::string, JobGroup> groups;
  std::vector<std::function<void()>> tasks;
  if (!fence_.lost()) add_start_tasks(0, n, running_of, true, groups, tasks, starting);
  env_.executor.run_all(std::move(tasks));
  starting.end_round();
  report_.phases.emplace_back("load+submit", submitting.busy());
  report_.phases.emplace_back("record", recording.busy());
  report_.phases.emplace_back("start", starting.busy());
}

void Step::prefetch() {
  std::vector<std::string> ids;
  ids.reserve(runs_.size());
  for (const WorkflowRun& run : runs_) ids.push_back(run.wf->id);
  if (auto done = env_.db.prefetch(ids, now_ - kSlidingWindow); !done) {
    spdlog::warn("prefetching the state of {} workflows failed: {}", ids.size(),
                 done.error().message);
  }
}

void Step::load_and_pick(WorkflowRun& run) {
  if (fence_.lost()) return;  // the step stops (logged once by the fence)
  auto paused = env_.db.is_paused(run.wf->id);
  if (!paused) return run.error(paused.error().message);
  if (*paused) return;
  auto loaded = load_window(run, env_.db, now_, config_.schedule_context());
  if (!loaded) return run.error(loaded.error().message);
  run.active = true;
  if (env_.drain) return;  // maintenance drain: READY slots wait
  run.picks = pick_with_lanes(*run.wf->strategy, run.slots, env_.running_backfills);
}

void Step::load_and_submit(WorkflowRun& run) {
  if (!limited()) load_and_pick(run);
  if (fence_.lost()) return release_tokens(run);
  const Workflow& wf = *run.wf;
  for (SlotState& pick : run.picks) {
    // Datasets: the consumed set goes into the RUNNING record; leftovers are removed.
    auto inputs = datasets_.before_submit(wf, pick, run.running);
    if (!inputs) {
      run.error(fmt::format("preparing the datasets of slot {} failed: {}",
                            format_time(pick.id.time), inputs.error().message));
      break;
    }
    if (!inputs->context) {  // mode new: the data it was ready for went to another slot
      run.changes.push_back(
          {run.from(pick.id.time), waiting_again(pick, inputs->waiting), now_, "step"});
      continue;
    }
    if (const TimeZone& zone = wf.schedule->time_zone(); !zone.is_utc()) {  // ${local.year}...
      inputs->context->variables.merge(local_time_variables(zone, pick.id.time));
    }
    if (auto ok = fence_.confirm(); !ok) {  // a submitted job is visible (Slurm, Oozie)
      run.error(
          fmt::format("not submitting slot {}: {}", format_time(pick.id.time), ok.error().message));
      break;
    }
    auto external_id = call(*wf.service, "submit of " + to_string(pick.id),
                            [&] { return wf.service->submit_with(pick.id, *inputs->context); });
    spend_token(run);  // when the call is over: the service saw it before
    if (!external_id) {
      run.error(fmt::format("submitting slot {} failed: {}", format_time(pick.id.time),
                            external_id.error().message));
      if (external_id.error().code == ErrorCode::kInvalid) {  // refused: a failed attempt
        SlotState next = failed_attempt(wf, pick, external_id.error().message, now_);
        run.changes.push_back({run.from(pick.id.time), next, now_, "step"});
      }
      break;  // unreachable: the other picks stay READY
    }
    SlotState running = pick.running(*external_id).value();
    running.run_id = new_run_id(now_);  // the attempt's OpenLineage run (celos/lineage.h)
    run.running.push_back(std::move(running));
  }
  release_tokens(run);
}

std::vector<SlotChange> Step::record_running(std::size_t from, std::size_t to) {
  std::vector<WorkflowRun*> writers;
  for (std::size_t i = from; i < to; ++i) {
    if (!runs_[i].running.empty()) writers.push_back(&runs_[i]);
  }
  auto committed = write_isolated(writers, [](WorkflowRun& run) {
    std::vector<SlotChange> out;
    for (const SlotState& r : run.running) out.push_back({run.from(r.id.time), r, {}, "step"});
    return out;
  });
  for (WorkflowRun* run : writers) report_.submitted += static_cast<int>(run->running.size());
  return committed;
}

template <class ChangesOf>
std::vector<SlotChange> Step::write_isolated(std::vector<WorkflowRun*>& writers,
                                             ChangesOf changes_of) {
  std::vector<std::vector<SlotChange>> changes;
  std::vector<SlotChange> all;
  for (WorkflowRun* run : writers) {
    changes.push_back(changes_of(*run));
    for (SlotChange& c : changes.back()) {
      c.at = now_;
      all.push_back(c);
    }
  }
  if (all.empty()) return {};
  std::vector<bool> ok(writers.size(), true);
  if (auto written = put_changes(env_.db, env_.outbox, all); !written) {
    for (std::size_t i = 0; i < writers.size(); ++i) {
      if (auto mine = put_changes(env_.db, env_.outbox, changes[i]); !mine) {
        ok[i] = false;
        writers[i]->error(fmt::format("recording {} slot states failed: {}", changes[i].size(),
                                      mine.error().message));
        writers[i]->running.clear();  // submitted, not recorded: never started (logged above)
      }
    }
  }
  std::vector<SlotChange> committed;
  for (std::size_t i = 0; i < writers.size(); ++i) {
    if (!ok[i]) continue;
    report_.changed += static_cast<int>(changes[i].size());
    for (SlotChange& c : changes[i]) {
      log_change(c.from ? &*c.from : nullptr, c.to);
      committed.push_back(std::move(c));
    }
  }
  return committed;
}

template <class ListOf>
void Step::start_jobs(ListOf list_of) {
  std::map<std::string, JobGroup> groups;
  std::vector<std::function<void()>> tasks;
  StageClock clock(env_.clock);
  add_start_tasks(0, runs_.size(), list_of, false, groups, tasks, clock);
  add_start_tasks(0, runs_.size(), list_of, true, groups, tasks, clock);
  env_.executor.run_all(std::move(tasks));
}

template <class ListOf>
void Step::add_start_tasks(std::size_t from, std::size_t to, ListOf list_of, bool batching,
                           std::map<std::string, JobGroup>& groups,
                           std::vector<std::function<void()>>& tasks, StageClock& clock) {
  std::vector<std::string> keys;
  for (std::size_t r = from; r < to; ++r) {
    WorkflowRun& run = runs_[r];
    const ExternalService& service = *run.wf->service;
    if (service.traits().batches_start != batching) continue;
    for (const SlotState& s : list_of(run)) {
      std::string key = group_key(service, *run.wf, batching);
      JobGroup& g = groups[key];
      if (g.jobs.empty()) keys.push_back(std::move(key));
      g.service = run.wf->service.get();
      g.jobs.push_back({s.id, *s.external_id});
      g.targets.push_back({&run, 0});
    }
  }
  for (const std::string& key : keys) {
    JobGroup& group = groups.at(key);
    tasks.push_back(clock.timed([this, &group] {
      if (auto ok = fence_.confirm(); !ok) {  // the next leader starts them (kSubmitted)
        group.targets.front().first->error(
            fmt::format("not starting {} jobs: {}", group.jobs.size(), ok.error().message));
        return;
      }
      auto started = call(*group.service, fmt::format("start of {} jobs", group.jobs.size()),
                          [&]() -> Result<std::map<std::string, Result<void>>> {
                            return group.service->start_many(group.jobs);
                          });
      for (std::size_t i = 0; i < group.jobs.size(); ++i) {
        const auto& job = group.jobs[i];
        Result<void> r = started ? Result<void>{} : tl::unexpected(started.error());
        if (started) {
          auto it = started->find(job.external_id);
          if (it != started->end()) r = it->second;
        }
        // The status query of the next steps tells what became of it. A workflow's jobs are
        // all in one group, so no other task touches its run.
        if (!r) {
          group.targets[i].first->error(fmt::format("starting slot {} ({}) failed: {}",
                                                    format_time(job.slot.time), job.external_id,
                                                    r.error().message));
        }
      }
    }));
  }
}

void Step::write_changes() {
  std::vector<WorkflowRun*> writers;
  for (WorkflowRun& run : runs_) {
    if (!run.changes.empty()) writers.push_back(&run);
  }
  notify(write_isolated(writers, [](WorkflowRun& run) { return run.changes; }));
}

void Step::finish_report() {
  std::map<std::string, int> running;  // by workflow, for the limits of later steps
  for (WorkflowRun& run : runs_) {
    if (run.active) ++report_.workflows;
    for (std::string& e : run.errors) report_.errors.push_back(std::move(e));
    release_tokens(run);  // a run whose submissions threw half way
    if (!limited()) {
      count_slots(run, report_.slot_counts);
      continue;
    }
    std::map<SlotStatus, int> own;
    count_slots(run, own);
    for (const auto& [status, n] : own) report_.slot_counts[status] += n;
    if (run.active) running[run.wf->id] = own[SlotStatus::kRunning];
  }
  record_running_book(running);
  if (fence_.lost()) report_.errors.push_back("lease lost, the step stopped: " + fence_.why());
  report_.external_calls = gate_.calls();
  report_.external_call_errors = gate_.failures();
  report_.data_checks = triggers_.checks();
  report_.data_check_calls = triggers_.calls();
  report_.data_checks_deferred = checks_deferred_;
  report_.slowest_call = gate_.slowest();
}

void log_change(const SlotState* from, const SlotState& to) {
  if (!spdlog::should_log(spdlog::level::info)) return;
  spdlog::info("slot {}: {} -> {}{}", to_string(to.id),
               to_string(from ? from->status : SlotStatus::kWaiting), to_string(to.status),
               to.external_id ? fmt::format(" (external id {})", *to.external_id) : "");
}

SlotState failed_attempt(const Workflow& workflow, const SlotState& slot, std::string message,
                         Time now) {
  SlotState next = slot.retry_count < workflow.max_retry_count
                       ? retry_with_backoff(slot, workflow, now).value()  // model/retry_backoff.h
                       : slot.failure().value();
  next.message = std::move(message);
  return next;
}

StepReport run_step(const WorkflowConfig& config, Time now,
                    const std::optional<std::set<std::string>>& ids, StepEnvironment env) {
  StepReport report;
  report.now = now;
  Step(config, now, std::move(env), report).run(ids);
  return report;
}

}  // namespace celos::detail
