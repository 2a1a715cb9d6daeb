#include "celos/scheduler.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "model/dataset_step.h"

namespace celos {
namespace {

using Clock = std::chrono::steady_clock;

// The TriggerContext of one step (or one /trigger-status read): answers are cached so that a
// path of a slot is checked once per step however many triggers refer to it, and a file
// system that failed once is not asked again in the same step (HDFS down: fail fast).
class StepTriggerContext final : public TriggerContext {
 public:
  StepTriggerContext(Time now, StateDatabase& db, FileSystemResolver& file_systems)
      : now_(now), db_(db), file_systems_(file_systems) {}

  Time now() const override { return now_; }

  Result<bool> path_exists(const std::string& fs_uri, const std::string& path) override {
    auto key = std::make_pair(fs_uri, path);
    if (auto it = exists_.find(key); it != exists_.end()) return it->second;
    if (auto it = down_.find(fs_uri); it != down_.end()) return tl::unexpected(it->second);
    auto fs = file_systems_.resolve(fs_uri);
    Result<bool> answer = fs ? (*fs)->exists(path) : tl::unexpected(fs.error());
    if (!answer) {
      down_.emplace(fs_uri, answer.error());
      return answer;
    }
    exists_.emplace(std::move(key), answer);
    return answer;
  }

  Result<bool> slot_succeeded(const std::string& workflow_id, Time time) override {
    auto key = std::make_pair(workflow_id, time);
    if (auto it = succeeded_.find(key); it != succeeded_.end()) return it->second;
    auto state = db_.get_slot(SlotId{workflow_id, time});
    if (!state) return tl::unexpected(state.error());
    const bool ok = state->has_value() && (*state)->status == SlotStatus::kSuccess;
    succeeded_.emplace(std::move(key), ok);
    return ok;
  }

  // Datasets: answered from the state database (model/dataset_step.h), no file system call.
  Result<SlotStatus> slot_status(const std::string& w, Time t) override {
    return datasets_.slot_status(w, t);
  }
  Result<std::vector<SlotState>> stored_slots(const std::string& w, Time s, Time e) override {
    return datasets_.stored_slots(w, s, e);
  }
  Result<bool> instance_announced(const std::string& d, Time t) override {
    return datasets_.instance_announced(d, t);
  }
  Result<std::vector<Time>> announced_instances(const std::string& d, Time s, Time e) override {
    return datasets_.announced_instances(d, s, e);
  }

 private:
  Time now_;
  StateDatabase& db_;
  FileSystemResolver& file_systems_;
  std::map<std::pair<std::string, std::string>, Result<bool>> exists_;
  std::map<std::string, Error> down_;
  std::map<std::pair<std::string, Time>, bool> succeeded_;
  DatasetLookups datasets_{db_};
};

Result<const Workflow*> find_workflow(const WorkflowConfig& config, const std::string& id) {
  const Workflow* wf = config.find(id);
  if (!wf) return fail(fmt::format("unknown workflow \"{}\"", id), ErrorCode::kNotFound);
  return wf;
}

void log_change(const SlotState& from, const SlotState& to) {
  spdlog::info("slot {}: {} -> {}{}", to_string(to.id), to_string(from.status),
               to_string(to.status),
               to.external_id ? fmt::format(" (external id {})", *to.external_id) : "");
}

// Everything one workflow does in one step; changes are collected for a grouped write.
class WorkflowStep {
 public:
  WorkflowStep(const Workflow& workflow, const WorkflowConfig& config, Time now,
               StateDatabase& db, StepTriggerContext& triggers, StepReport& report,
               DatasetStep& datasets)
      : wf_(workflow), config_(config), now_(now), db_(db), triggers_(triggers), report_(report),
        datasets_(datasets),
        drain_(report.maintenance == MaintenanceMode::kDrain) {}

  // Phase 1: load the slots and submit the strategy's picks. Returns the picks as RUNNING, to
  // be recorded (for all workflows at once) before they are started.
  // The state each slot had when it was loaded, for the listeners (nothing = not stored).
  std::optional<SlotState> loaded_state(Time t) const {
    auto it = stored_.find(t);
    if (it == stored_.end()) return std::nullopt;
    return it->second;
  }

  Result<std::vector<SlotState>> load_and_submit() {
    auto slots = load_slots();
    if (!slots) return tl::unexpected(slots.error());
    slots_ = std::move(*slots);
    return submit_picks();
  }

  // Phase 2, once the RUNNING records are durable: start the submitted jobs.
  void start(const std::vector<SlotState>& running) {
    for (const SlotState& slot : running) {
      ++report_.submitted;
      if (auto started = wf_.service->start(slot.id, *slot.external_id); !started) {
        // The status query of the next steps tells what became of it.
        error(fmt::format("starting slot {} ({}) failed: {}", format_time(slot.id.time),
                          *slot.external_id, started.error().message));
      }
    }
  }

  // Recorded RUNNING but not started (a crash between the record and the start): started now;
  // the service makes a second start of one attempt do nothing (SPEC §16).
  void start_recorded(const SlotState& slot) {
    spdlog::info("{}: slot {} was recorded RUNNING but never started: starting {}", wf_.id,
                 format_time(slot.id.time), *slot.external_id);
    if (auto started = wf_.service->start(slot.id, *slot.external_id); !started) {
      error(fmt::format("starting slot {} ({}) failed: {}", format_time(slot.id.time),
                        *slot.external_id, started.error().message));
    }
  }

  // Phase 3: advance every slot loaded in phase 1; returns the changes to write.
  std::vector<SlotState> advance_all() {
    std::vector<SlotState> changes;
    auto& counts = report_.slots_by_status[wf_.id];
    counts.fill(0);
    for (const SlotState& slot : slots_) {
      SlotStatus status = submitted_.count(slot.id.time) ? SlotStatus::kRunning : slot.status;
      if (auto next = advance(slot); next && *next != slot) {
        log_change(slot, *next);
        status = next->status;
        changes.push_back(std::move(*next));
      }
      ++counts[static_cast<std::size_t>(status)];
    }
    return changes;
  }

 private:
  void error(std::string message) {
    spdlog::warn("workflow {}: {}", wf_.id, message);
    report_.errors.push_back(fmt::format("{}: {}", wf_.id, std::move(message)));
  }

  // The schedule's times in the sliding window plus the slots marked for rerun, with their
  // stored states (WAITING where nothing is stored), oldest first.
  Result<std::vector<SlotState>> load_slots() {
    const Time window_start = std::max<Time>(now_ - kSlidingWindow, wf_.start_time);
    auto times = wf_.schedule->times(window_start, now_, config_.schedule_context());
    if (!times) return tl::unexpected(times.error());
    auto stored = db_.get_slots(wf_.id, window_start, now_);
    if (!stored) return tl::unexpected(stored.error());
    std::map<Time, SlotState> slots;
    for (Time t : *times) slots.emplace(t, SlotState::waiting(SlotId{wf_.id, t}));
    for (SlotState& s : *stored) {
      if (slots.count(s.id.time)) {
        stored_.insert_or_assign(s.id.time, s);
        slots.insert_or_assign(s.id.time, std::move(s));
      }
    }
    auto reruns = db_.rerun_times(wf_.id, now_);
    if (!reruns) return tl::unexpected(reruns.error());
    for (Time t : *reruns) {
      if (t < wf_.start_time || slots.count(t)) continue;
      auto state = db_.get_slot(SlotId{wf_.id, t});
      if (!state) return tl::unexpected(state.error());
      if (state->has_value()) stored_.insert_or_assign(t, **state);
      slots.emplace(t, state->value_or(SlotState::waiting(SlotId{wf_.id, t})));
    }
    std::vector<SlotState> out;
    out.reserve(slots.size());
    for (auto& [_, s] : slots) out.push_back(std::move(s));
    return out;
  }

  // SPEC §4 step 3: submit; the caller records RUNNING with the external id, then starts.
  Result<std::vector<SlotState>> submit_picks() {
    std::vector<SlotState> running;
    if (drain_) return running;  // maintenance drain: READY slots wait
    for (SlotState pick : wf_.strategy->pick(slots_)) {
      // Datasets: the consumed set goes into the RUNNING record; leftovers are removed.
      auto inputs = datasets_.before_submit(wf_, pick, running);
      if (!inputs) {
        error(fmt::format("preparing the datasets of slot {} failed: {}",
                          format_time(pick.id.time), inputs.error().message));
        break;
      }
      auto external_id = wf_.service->submit_with(pick.id, *inputs);
      if (!external_id) {
        error(fmt::format("submitting slot {} failed: {}", format_time(pick.id.time),
                          external_id.error().message));
        break;  // the service is probably down: leave the other picks READY
      }
      auto next = pick.running(*external_id);
      if (!next) return tl::unexpected(next.error());
      log_change(pick, *next);
      submitted_.insert(pick.id.time);
      running.push_back(std::move(*next));
    }
    return running;
  }

  // SPEC §4 step 4 for one slot loaded at the start of the step.
  std::optional<SlotState> advance(const SlotState& slot) {
    switch (slot.status) {
      case SlotStatus::kWaiting: {
        auto status = wf_.trigger->evaluate(slot.id.time, triggers_);
        if (!status) {
          error(fmt::format("trigger of slot {}: {}", format_time(slot.id.time),
                            status.error().message));
          return std::nullopt;
        }
        if (status->ready) return slot.ready().value();
        if (now_ > slot.id.time + std::chrono::seconds(wf_.wait_timeout_seconds)) {
          return slot.wait_timeout().value();
        }
        return std::nullopt;
      }
      case SlotStatus::kRunning: {
        if (!slot.external_id) return slot.failure().value();  // cannot ask: a broken record
        auto status = wf_.service->status(slot.id, *slot.external_id);
        if (!status) {
          error(fmt::format("status of slot {} ({}): {}", format_time(slot.id.time),
                            *slot.external_id, status.error().message));
          return std::nullopt;
        }
        if (*status == ExternalStatus::kSuccess) {
          // Datasets: the done flags are written before SUCCESS is stored.
          if (auto flagged = datasets_.before_success(wf_, slot); !flagged) {
            error(fmt::format("slot {} stays RUNNING: {}", format_time(slot.id.time),
                              flagged.error().message));
            return std::nullopt;
          }
          return slot.success().value();
        }
        if (*status == ExternalStatus::kFailure) {
          if (slot.retry_count < wf_.max_retry_count) return slot.retry().value();
          SlotState failed = slot.failure().value();
          datasets_.after_failure(wf_, failed);  // datasets: incomplete outputs go
          return failed;
        }
        if (*status == ExternalStatus::kSubmitted) start_recorded(slot);
        return std::nullopt;
      }
      default:
        return std::nullopt;  // READY waits for the strategy; final states stay
    }
  }

  const Workflow& wf_;
  const WorkflowConfig& config_;
  std::vector<SlotState> slots_;  // loaded in phase 1
  std::map<Time, SlotState> stored_;  // what was stored of them
  Time now_;
  StateDatabase& db_;
  StepTriggerContext& triggers_;
  StepReport& report_;
  DatasetStep& datasets_;
  bool drain_;
  std::set<Time> submitted_;  // picks submitted in this step (loaded READY, now RUNNING)
};

}  // namespace

Scheduler::Scheduler(WorkflowSource& source, StateDatabase& db, FileSystemResolver& file_systems)
    : source_(source), db_(db), file_systems_(file_systems) {}

void Scheduler::add_listener(SchedulerListener& listener) { listeners_.push_back(&listener); }

void Scheduler::notify(const std::vector<SlotChange>& changes) {
  if (changes.empty()) return;
  for (SchedulerListener* l : listeners_) l->on_slot_changes(changes);
}

void Scheduler::set_config(WorkflowConfigPtr config) {
  std::lock_guard lock(config_mutex_);
  config_ = std::move(config);
}

WorkflowConfigPtr Scheduler::config() {
  {
    std::lock_guard lock(config_mutex_);
    if (config_) return config_;
  }
  return reload();
}

WorkflowConfigPtr Scheduler::reload() {
  source_.clear_cache();
  auto config = source_.load();
  set_config(config);
  return config;
}

StepReport Scheduler::step(Time now, const std::optional<std::set<std::string>>& ids) {
  const auto started = Clock::now();
  StepReport report;
  report.now = now;
  auto config = source_.load();
  set_config(config);
  if (maintenance_pauses(report)) return finish_step(report, started);
  spdlog::info("step at {} started ({} workflows loaded, {} load errors)", format_time(now),
               config->workflows.size(), config->errors.size());
  StepTriggerContext triggers(now, db_, file_systems_);
  DatasetStep datasets(*config, db_, file_systems_, now);

  // Each workflow is its own failure domain: an error or even a bug in one never stops the
  // others (SPEC §4 step 2).
  auto isolated = [&report](const std::string& id, auto&& body) {
    try {
      body();
    } catch (const std::exception& e) {
      spdlog::error("workflow {}: step failed: {}", id, e.what());
      report.errors.push_back(fmt::format("{}: {}", id, e.what()));
    }
  };
  auto or_throw = [](auto result) {
    if (!result) throw std::runtime_error(result.error().message);
    return std::move(*result);
  };

  // Phase 1: load and submit, workflow by workflow.
  struct Stepping {
    const Workflow* workflow;
    std::unique_ptr<WorkflowStep> step;
    std::vector<SlotState> running;
  };
  std::vector<Stepping> stepping;
  for (const auto& entry : config->workflows) {
    // Not a structured binding: clang 14 (the fuzz preset) cannot capture those in a lambda.
    const std::string& id = entry.first;
    const Workflow& workflow = entry.second;
    if (ids && !ids->count(id)) continue;
    isolated(id, [&] {
      if (or_throw(db_.is_paused(id))) return;
      ++report.workflows;
      auto step = std::make_unique<WorkflowStep>(workflow, *config, now, db_, triggers, report,
                                                 datasets);
      auto running = or_throw(step->load_and_submit());
      stepping.push_back({&workflow, std::move(step), std::move(running)});
    });
  }

  // Phase 2: record every submitted slot as RUNNING in one durable write (not one fsync per
  // workflow: at the top of the hour every hourly workflow submits), then start them. If the
  // record cannot be written, nothing is started: an unstarted job is harmless, a started job
  // that the database does not know about is not.
  std::vector<SlotState> running;
  for (const Stepping& s : stepping) running.insert(running.end(), s.running.begin(), s.running.end());
  if (auto written = db_.put_slots(running); !written) {
    for (const Stepping& s : stepping) {
      if (s.running.empty()) continue;
      spdlog::error("workflow {}: recording {} submitted slots failed, not starting them: {}",
                    s.workflow->id, s.running.size(), written.error().message);
      report.errors.push_back(fmt::format("{}: {}", s.workflow->id, written.error().message));
    }
  } else {
    report.changed += static_cast<int>(running.size());
    std::vector<SlotChange> committed;
    for (const Stepping& s : stepping) {
      for (const SlotState& r : s.running) {
        committed.push_back({s.step->loaded_state(r.id.time), r, now, "step"});
      }
    }
    notify(committed);
    for (Stepping& s : stepping) isolated(s.workflow->id, [&] { s.step->start(s.running); });
  }

  // Phase 3: advance every loaded slot; all changes are written as one group.
  std::vector<SlotState> changes;
  std::vector<SlotChange> committed;
  for (Stepping& s : stepping) {
    isolated(s.workflow->id, [&] {
      auto workflow_changes = s.step->advance_all();
      for (const SlotState& c : workflow_changes) {
        // A slot submitted in this step was loaded READY; its RUNNING record is the "from".
        auto from = s.step->loaded_state(c.id.time);
        for (const SlotState& r : s.running) {
          if (r.id == c.id) from = r;
        }
        committed.push_back({std::move(from), c, now, "step"});
      }
      changes.insert(changes.end(), std::make_move_iterator(workflow_changes.begin()),
                     std::make_move_iterator(workflow_changes.end()));
    });
  }
  if (auto written = db_.put_slots(changes); !written) {
    spdlog::error("writing {} slot states failed: {}", changes.size(), written.error().message);
    report.errors.push_back("state database: " + written.error().message);
  } else {
    report.changed += static_cast<int>(changes.size());
    notify(committed);
  }
  return finish_step(report, started);
}

bool Scheduler::maintenance_pauses(StepReport& report) {
  auto maintenance = db_.maintenance();
  if (!maintenance) {
    // Unreadable: the operator may have asked for a pause, so do nothing rather than submit.
    spdlog::error("maintenance mode unreadable, the step does nothing: {}",
                  maintenance.error().message);
    report.errors.push_back("maintenance: " + maintenance.error().message);
    report.maintenance = MaintenanceMode::kPause;
  } else {
    report.maintenance = maintenance->mode;
  }
  if (report.maintenance != MaintenanceMode::kPause) return false;
  spdlog::info("step at {}: maintenance pause, nothing done", format_time(report.now));
  return true;
}

StepReport Scheduler::finish_step(StepReport& report, std::chrono::steady_clock::time_point started) {
  report.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  spdlog::info("step at {} finished in {} ms: {} workflows, {} changes, {} submitted, {} errors",
               format_time(report.now), report.duration.count(), report.workflows, report.changed,
               report.submitted, report.errors.size());
  for (SchedulerListener* l : listeners_) l->on_step(report);
  return std::move(report);
}

Result<const Workflow*> Scheduler::find_slot(const WorkflowConfig& config,
                                             const std::string& workflow, Time slot_time) {
  auto wf = find_workflow(config, workflow);
  if (!wf) return wf;
  auto is_slot = is_slot_time(*(*wf)->schedule, slot_time, config.schedule_context());
  if (!is_slot) return tl::unexpected(is_slot.error());
  if (!*is_slot || slot_time < (*wf)->start_time) {
    return fail(fmt::format("{} is not a slot of workflow \"{}\"", format_time(slot_time), workflow),
                ErrorCode::kNotFound);
  }
  return wf;
}

Result<SlotState> Scheduler::rerun(const std::string& workflow, Time slot_time, Time now) {
  auto config = this->config();
  auto wf = find_slot(*config, workflow, slot_time);
  if (!wf) return tl::unexpected(wf.error());
  const SlotId id{workflow, slot_time};
  auto stored = db_.get_slot(id);
  if (!stored) return tl::unexpected(stored.error());
  // A slot with nothing stored may be rerun: that is how backfill marks old slots.
  auto next = stored->has_value() ? (*stored)->rerun() : SlotState::waiting(id);
  if (!next) return next;
  if (stored->has_value()) {  // datasets: a rerun SUCCESS slot's done flags go first
    DatasetStep datasets(*config, db_, file_systems_, now);
    if (auto ok = datasets.before_rerun(**wf, **stored); !ok) return tl::unexpected(ok.error());
  }
  if (auto marked = db_.mark_rerun(id, now); !marked) return tl::unexpected(marked.error());
  if (auto written = db_.put_slots({*next}); !written) return tl::unexpected(written.error());
  spdlog::info("slot {}: rerun requested ({} -> WAITING)", to_string(id),
               stored->has_value() ? to_string((*stored)->status) : "no state");
  notify({SlotChange{*stored, *next, now, "api"}});
  return next;
}

Result<SlotState> Scheduler::kill(const std::string& workflow, Time slot_time) {
  auto config = this->config();
  auto wf = find_slot(*config, workflow, slot_time);
  if (!wf) return tl::unexpected(wf.error());
  const SlotId id{workflow, slot_time};
  auto stored = db_.get_slot(id);
  if (!stored) return tl::unexpected(stored.error());
  const SlotState current = stored->value_or(SlotState::waiting(id));
  auto next = current.killed();
  if (!next) return next;
  if (current.status == SlotStatus::kRunning && current.external_id) {
    if (auto killed = (*wf)->service->kill(id, *current.external_id); !killed) {
      return fail(fmt::format("killing {} of slot {} failed: {}", *current.external_id,
                              to_string(id), killed.error().message));
    }
  }
  if (auto written = db_.put_slots({*next}); !written) return tl::unexpected(written.error());
  if (current.status == SlotStatus::kRunning) {  // datasets: the attempt's incomplete outputs go
    DatasetStep(*config, db_, file_systems_, Time{}).after_failure(**wf, *next);
  }
  log_change(current, *next);
  notify({SlotChange{*stored, *next, Time{}, "api"}});
  return next;
}

Result<void> Scheduler::pause(const std::string& workflow, bool paused) {
  if (auto wf = find_workflow(*config(), workflow); !wf) return tl::unexpected(wf.error());
  auto done = db_.set_paused(workflow, paused);
  if (done) spdlog::info("workflow {} {}", workflow, paused ? "paused" : "unpaused");
  return done;
}

Result<bool> Scheduler::is_paused(const std::string& workflow) { return db_.is_paused(workflow); }

Result<std::vector<SlotState>> Scheduler::workflow_slots(const std::string& workflow, Time start,
                                                         Time end) {
  auto config = this->config();
  auto wf = find_workflow(*config, workflow);
  if (!wf) return tl::unexpected(wf.error());
  start = std::max(start, (*wf)->start_time);
  if (end <= start) return std::vector<SlotState>{};
  auto times = (*wf)->schedule->times(start, end, config->schedule_context());
  if (!times) return tl::unexpected(times.error());
  auto stored = db_.get_slots(workflow, start, end);
  if (!stored) return tl::unexpected(stored.error());
  std::vector<SlotState> out;
  out.reserve(times->size());
  auto s = stored->begin();
  for (Time t : *times) {
    while (s != stored->end() && s->id.time < t) ++s;
    out.push_back(s != stored->end() && s->id.time == t ? *s : SlotState::waiting({workflow, t}));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

Result<SlotState> Scheduler::slot_state(const std::string& workflow, Time slot_time) {
  if (auto wf = find_workflow(*config(), workflow); !wf) return tl::unexpected(wf.error());
  auto stored = db_.get_slot(SlotId{workflow, slot_time});
  if (!stored) return tl::unexpected(stored.error());
  if (!stored->has_value()) {
    return fail(fmt::format("no state stored for slot {}@{}", workflow, format_time(slot_time)),
                ErrorCode::kNotFound);
  }
  return **stored;
}

Result<TriggerStatus> Scheduler::trigger_status(const std::string& workflow, Time slot_time,
                                                Time now) {
  auto config = this->config();
  auto wf = find_workflow(*config, workflow);
  if (!wf) return tl::unexpected(wf.error());
  StepTriggerContext context(now, db_, file_systems_);
  return (*wf)->trigger->evaluate(slot_time, context);
}

}  // namespace celos
