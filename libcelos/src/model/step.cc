#include "model/step.h"

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/retry_backoff.h"
#include "model/step_context.h"
#include "model/step_run.h"

namespace celos::detail {
namespace {

using SteadyClock = std::chrono::steady_clock;

// A RUNNING slot this close to leaving the 7-day window gets a rerun marker, which keeps it in
// the step's view until it is final (SPEC §4: a running job is followed wherever it is in
// time; a marker of a slot that is not final does not expire). Two days of margin cover a
// scheduler that was down for a while.
constexpr auto kFollowMargin = std::chrono::hours(48);

// WAITING slots are evaluated in chunks: enough tasks to overlap the data checks of a workflow
// with many late slots, few enough that a first step of 168 slots per workflow is not drowned
// in task overhead.
constexpr std::size_t kTriggerChunk = 16;

// The submit/record/start pipeline cuts the workflows into at most kPipelineParts parts of at
// least kPipelinePartMin: a part's records are one durable write (two syncfs), so parts stay
// few; small steps are one part (submit all, record all, start all).
constexpr std::size_t kPipelineParts = 8;
constexpr std::size_t kPipelinePartMin = 128;

void log_change(const SlotState& from, const SlotState& to) {
  spdlog::info("slot {}: {} -> {}{}", to_string(to.id), to_string(from.status),
               to_string(to.status),
               to.external_id ? fmt::format(" (external id {})", *to.external_id) : "");
}

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

class Step {
 public:
  Step(const WorkflowConfig& config, Time now, StepEnvironment env, StepReport& report)
      : config_(config), now_(now), env_(std::move(env)), report_(report),
        triggers_(now, env_.db, env_.file_systems),
        fence_(env_.guard ? *env_.guard : always_current_lease_guard()),
        datasets_(config, env_.db, env_.file_systems, now, fence_) {}

  void run(const std::optional<std::set<std::string>>& ids) {
    for (const auto& [id, workflow] : config_.workflows) {
      if (ids && !ids->count(id)) continue;
      runs_.push_back(WorkflowRun{});
      runs_.back().wf = &workflow;
    }
    timed("prefetch", [&] { prefetch(); });
    // A step that lost the lease (fence_) stops after the phase that found out.
    submit_record_start();
    if (!fence_.lost()) timed("advance", [&] { advance(); });
    report_.phases.emplace_back("follow", follow_busy_);  // during advance
    if (!fence_.lost()) timed("restart", [&] { start_jobs(restart_of); });
    if (!fence_.lost()) timed("write", [&] { write_changes(); });
    finish_report();
  }

 private:
  template <class Phase>
  void timed(const char* name, Phase&& phase) {
    const auto started = std::chrono::steady_clock::now();
    phase();
    report_.phases.emplace_back(name, std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::steady_clock::now() - started));
  }

  // Phases 1 and 2 as a pipeline over parts of the workflows: in round k the executor submits
  // the picks of part k, writes the RUNNING records of part k-1 (one task) and starts the jobs
  // of part k-2, so that the disk's work overlaps the calls. Per workflow the order of SPEC §10
  // and §16 stays: submitted, then recorded durably, then started. Services that start many
  // jobs in one call (Slurm: one `scontrol release` a step) start after every part is recorded.
  // The phases load+submit, record and start report how long each stage was busy.
  void submit_record_start() {
    const std::size_t n = runs_.size();
    const std::size_t parts = std::clamp<std::size_t>(n / kPipelinePartMin, 1, kPipelineParts);
    auto first = [&](std::size_t k) { return k * n / parts; };
    StageClock submitting, recording, starting;
    for (std::size_t k = 0; k < parts + 2 && !fence_.lost(); ++k) {
      std::vector<std::function<void()>> tasks;
      std::map<std::string, JobGroup> groups;
      std::vector<SlotChange> committed;
      if (k < parts) {
        for (std::size_t i = first(k); i < first(k + 1); ++i) {
          tasks.push_back(submitting.timed([this, i] {
            isolated(runs_[i], [&] { load_and_submit(runs_[i]); });
          }));
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

  static std::vector<SlotState>& running_of(WorkflowRun& run) { return run.running; }
  static std::vector<SlotState>& restart_of(WorkflowRun& run) { return run.restart; }

  void notify(const std::vector<SlotChange>& committed) {
    if (!committed.empty() && env_.committed) env_.committed(committed);
  }

  // One bulk read of what the per-workflow tasks will read, where the backend can (PostgreSQL's
  // leader cache). A failure costs only speed: the tasks' reads ask again.
  void prefetch() {
    std::vector<std::string> ids;
    ids.reserve(runs_.size());
    for (const WorkflowRun& run : runs_) ids.push_back(run.wf->id);
    if (auto done = env_.db.prefetch(ids, now_ - kSlidingWindow); !done) {
      spdlog::warn("prefetching the state of {} workflows failed: {}", ids.size(),
                   done.error().message);
    }
  }

  // Each workflow is its own failure domain: an error or even a bug in one never stops the
  // others (SPEC §4 step 2).
  template <class Body>
  static void isolated(WorkflowRun& run, Body&& body) {
    try {
      body();
    } catch (const std::exception& e) {
      run.active = false;
      run.error(fmt::format("step failed: {}", e.what()));
    }
  }

  // One external call through the step's gate; a bug (an exception) in a service becomes an
  // error of that call, never of the executor's thread.
  template <class Call>
  auto call(const ExternalService& service, const std::string& what, Call&& c) -> decltype(c()) {
    return gate_.run(service.endpoint(), what, [&]() -> decltype(c()) {
      try {
        return c();
      } catch (const std::exception& e) {
        return tl::unexpected(Error{fmt::format("{} failed: {}", what, e.what())});
      }
    });
  }

  // Phase 1, one task per workflow: load its slots, then submit the strategy's picks one
  // after another in pick order, stopping at the first failure (SPEC §16).
  void load_and_submit(WorkflowRun& run) {
    if (fence_.lost()) return;  // the step stops (logged once by the fence)
    auto paused = env_.db.is_paused(run.wf->id);
    if (!paused) return run.error(paused.error().message);
    if (*paused) return;
    auto loaded = load_window(run, env_.db, now_, config_.schedule_context());
    if (!loaded) return run.error(loaded.error().message);
    run.active = true;
    if (env_.drain) return;  // maintenance drain: READY slots wait
    const Workflow& wf = *run.wf;
    for (SlotState pick : wf.strategy->pick(run.slots)) {
      // Datasets: the consumed set goes into the RUNNING record; leftovers are removed.
      auto inputs = datasets_.before_submit(wf, pick, run.running);
      if (!inputs) {
        run.error(fmt::format("preparing the datasets of slot {} failed: {}",
                              format_time(pick.id.time), inputs.error().message));
        break;
      }
      if (!inputs->context) {  // mode new: the data it was ready for went to another slot
        run.changes.push_back({run.from(pick.id.time), waiting_again(pick, inputs->waiting),
                               now_, "step"});
        continue;
      }
      if (auto ok = fence_.confirm(); !ok) {  // a submitted job is visible (Slurm, Oozie)
        run.error(fmt::format("not submitting slot {}: {}", format_time(pick.id.time),
                              ok.error().message));
        break;
      }
      auto external_id = call(*wf.service, "submit of " + to_string(pick.id),
                              [&] { return wf.service->submit_with(pick.id, *inputs->context); });
      if (!external_id) {
        run.error(fmt::format("submitting slot {} failed: {}", format_time(pick.id.time),
                              external_id.error().message));
        if (external_id.error().code == ErrorCode::kInvalid) {  // refused: a failed attempt
          SlotState next = failed_attempt(wf, pick, external_id.error().message, now_);
          run.changes.push_back({run.from(pick.id.time), next, now_, "step"});
        }
        break;  // unreachable: the other picks stay READY
      }
      run.running.push_back(pick.running(*external_id).value());
    }
  }

  // The RUNNING records of runs_[from, to), durably (one task of the pipeline at a time).
  std::vector<SlotChange> record_running(std::size_t from, std::size_t to) {
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

  // Writes the changes of `writers` as one group (one sync); when that fails, workflow by
  // workflow, so that one workflow's unwritable directory is an error of that workflow alone.
  // Writers whose changes could not be written lose them (and are told so in their errors).
  // Returns the changes written, for the listeners (notified on the step's thread).
  template <class ChangesOf>
  std::vector<SlotChange> write_isolated(std::vector<WorkflowRun*>& writers, ChangesOf changes_of) {
    std::vector<std::vector<SlotChange>> changes;
    std::vector<SlotState> all;
    for (WorkflowRun* run : writers) {
      changes.push_back(changes_of(*run));
      for (SlotChange& c : changes.back()) {
        c.at = now_;
        all.push_back(c.to);
      }
    }
    if (all.empty()) return {};
    std::vector<bool> ok(writers.size(), true);
    if (auto written = env_.db.put_slots(all); !written) {
      for (std::size_t i = 0; i < writers.size(); ++i) {
        std::vector<SlotState> own;
        for (const SlotChange& c : changes[i]) own.push_back(c.to);
        if (auto mine = env_.db.put_slots(own); !mine) {
          ok[i] = false;
          writers[i]->error(fmt::format("recording {} slot states failed: {}", own.size(),
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
        if (c.from) log_change(*c.from, c.to);
        else log_change(SlotState::waiting(c.to.id), c.to);
        committed.push_back(std::move(c));
      }
    }
    return committed;
  }

  // Starts the jobs `list_of` names (restarts of jobs never started).
  template <class ListOf>
  void start_jobs(ListOf list_of) {
    std::map<std::string, JobGroup> groups;
    std::vector<std::function<void()>> tasks;
    StageClock clock;
    add_start_tasks(0, runs_.size(), list_of, false, groups, tasks, clock);
    add_start_tasks(0, runs_.size(), list_of, true, groups, tasks, clock);
    env_.executor.run_all(std::move(tasks));
  }

  // The tasks that start the jobs `list_of` names in runs_[from, to) of the services that
  // batch starts or not (`batching`): one start_many per endpoint for those that do (Slurm: one
  // `scontrol release`), one per workflow for the others. `groups` outlives the tasks.
  template <class ListOf>
  void add_start_tasks(std::size_t from, std::size_t to, ListOf list_of, bool batching,
                       std::map<std::string, JobGroup>& groups,
                       std::vector<std::function<void()>>& tasks, StageClock& clock) {
    std::vector<std::string> keys;
    for (std::size_t r = from; r < to; ++r) {
      WorkflowRun& run = runs_[r];
      const ExternalService& service = *run.wf->service;
      if (service.batches_start() != batching) continue;
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
                                                      format_time(job.slot.time),
                                                      job.external_id, r.error().message));
          }
        }
      }));
    }
  }

  // Phase 3: the status of every RUNNING slot and the trigger of every WAITING slot, asked
  // concurrently; then each slot loaded in phase 1 moves on.
  void advance() {
    std::map<std::string, JobGroup> groups;
    std::vector<std::function<void()>> tasks;
    for (WorkflowRun& run : runs_) {
      if (!run.active) continue;
      run.triggers.resize(run.slots.size());
      run.statuses.resize(run.slots.size());
      std::vector<std::size_t> waiting;
      for (std::size_t i = 0; i < run.slots.size(); ++i) {
        const SlotState& s = run.slots[i];
        if (s.status == SlotStatus::kRunning && s.external_id) {
          follow(run, s);
          const ExternalService& service = *run.wf->service;
          JobGroup& g = groups[group_key(service, *run.wf, service.batches_status())];
          g.service = run.wf->service.get();
          g.jobs.push_back({s.id, *s.external_id});
          g.targets.push_back({&run, i});
        } else if (s.status == SlotStatus::kWaiting && !backing_off(s)) {
          waiting.push_back(i);
        }
      }
      for (std::size_t from = 0; from < waiting.size(); from += kTriggerChunk) {
        std::vector<std::size_t> chunk(waiting.begin() + static_cast<std::ptrdiff_t>(from),
                                       waiting.begin() + static_cast<std::ptrdiff_t>(
                                           std::min(waiting.size(), from + kTriggerChunk)));
        tasks.push_back([this, &run, chunk = std::move(chunk)] {
          for (std::size_t i : chunk) {
            try {
              // Only "ready?" is kept: the status trees of 1.7 million slots would not fit.
              auto status = run.wf->trigger->evaluate(run.slots[i].id.time, triggers_);
              run.triggers[i] = status ? Result<bool>(status->ready)
                                       : Result<bool>(tl::unexpected(status.error()));
            } catch (const std::exception& e) {
              run.triggers[i] = fail(fmt::format("trigger failed: {}", e.what()));
            }
          }
        });
      }
    }
    std::vector<JobGroup> batches = split_batches(std::move(groups));
    for (JobGroup& group : batches) tasks.push_back([this, &group] { ask_status(group); });
    // The markers of the running slots near the window's end are written while the calls run.
    tasks.push_back([this] {
      const auto started = std::chrono::steady_clock::now();
      mark_followed();
      follow_busy_ = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - started);
    });
    env_.executor.run_all(std::move(tasks));
    for (WorkflowRun& run : runs_) {
      if (run.active) isolated(run, [&] { advance_slots(run); });
    }
  }

  void ask_status(JobGroup& group) {
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

  bool backing_off(const SlotState& s) const { return s.retry_at && now_ < *s.retry_at; }

  void advance_slots(WorkflowRun& run) {
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

  std::optional<SlotState> advance_waiting(WorkflowRun& run, const SlotState& slot,
                                           const Result<bool>& ready) {
    if (!ready) {
      run.error(fmt::format("trigger of slot {}: {}", format_time(slot.id.time),
                            ready.error().message));
      return std::nullopt;
    }
    if (*ready) return slot.ready().value();
    if (now_ > slot.id.time + std::chrono::seconds(run.wf->wait_timeout_seconds)) {
      return slot.wait_timeout().value();
    }
    return std::nullopt;
  }

  std::optional<SlotState> advance_running(WorkflowRun& run, const SlotState& slot,
                                           const std::optional<Result<ExternalStatus>>& status) {
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
        std::string why = (*status)->message.empty()
                              ? fmt::format("job {} failed", *slot.external_id)
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
        return std::nullopt;
    }
    return std::nullopt;
  }

  // Keeps a long-running slot in view after it leaves the window (see kFollowMargin): the
  // marker is written by mark_followed(), for all workflows at once, while advance() asks for
  // the statuses (whatever they answer: a slot that ends now keeps a marker that expires).
  void follow(WorkflowRun& run, const SlotState& slot) {
    if (run.marked.count(slot.id.time)) return;
    if (slot.id.time >= now_ - kSlidingWindow + kFollowMargin) return;
    run.follow.push_back(slot.id);
  }

  // One durable group for the step's new markers (a step of 10,000 workflows whose oldest slot
  // runs writes 10,000 of them); if the group fails, each workflow's own, as write_isolated.
  // Runs as a task beside advance()'s calls, which touch other members of the runs.
  void mark_followed() {
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

  void write_changes() {
    std::vector<WorkflowRun*> writers;
    for (WorkflowRun& run : runs_) {
      if (!run.changes.empty()) writers.push_back(&run);
    }
    notify(write_isolated(writers, [](WorkflowRun& run) { return run.changes; }));
  }

  void finish_report() {
    for (WorkflowRun& run : runs_) {
      if (run.active) ++report_.workflows;
      for (std::string& e : run.errors) report_.errors.push_back(std::move(e));
      count_slots(run, report_.slot_counts);
    }
    if (fence_.lost()) report_.errors.push_back("lease lost, the step stopped: " + fence_.why());
    report_.external_calls = gate_.calls();
    report_.external_call_errors = gate_.failures();
    report_.data_checks = triggers_.checks();
    report_.slowest_call = gate_.slowest();
  }

  const WorkflowConfig& config_;
  Time now_;
  StepEnvironment env_;
  StepReport& report_;
  StepTriggerContext triggers_;
  SideEffectFence fence_;
  DatasetStep datasets_;
  CallGate gate_;
  std::vector<WorkflowRun> runs_;
  std::chrono::milliseconds follow_busy_{0};
};

}  // namespace

SlotState failed_attempt(const Workflow& workflow, const SlotState& slot, std::string message,
                         Time now) {
  SlotState next = slot.retry_count < workflow.max_retry_count
                       ? retry_with_backoff(slot, workflow, now).value()  // celos/retry_backoff.h
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
