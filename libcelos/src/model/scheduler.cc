#include "celos/scheduler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/deadline_predictor.h"
#include "model/data_check_memory.h"
#include "model/dataset_step.h"
#include "model/retry_backoff.h"
#include "model/step.h"
#include "model/step_context.h"

namespace celos {
namespace {

// A first step holds the slots of every workflow at once, spread over the executor threads'
// malloc arenas; after a step that changed or held many slots, hand what is free back to the
// system so that RSS reflects what is kept. Not after every step: a quiet step would then fault
// its working set back in each time (a fifth of its time at 3,000 workflows).
constexpr int kTrimAfterChanges = 1000;
constexpr int kTrimAfterOpenSlots = 100'000;  // ~20 MB of slot states held during the step

bool held_much(const StepReport& report) {
  if (report.changed >= kTrimAfterChanges) return true;
  int open = 0;
  for (const auto& [status, count] : report.slot_counts) {
    if (!is_final(status)) open += count;
  }
  return open >= kTrimAfterOpenSlots;
}

// At most once a second of real time: the memory is the process's, and the next step faults
// its working set back in (the simulator steps hundreds of times a second, each with thousands
// of changes; celos-server steps once a minute, so it trims after every step that held much).
void release_free_memory() {
#if defined(__GLIBC__)
  using std::chrono::steady_clock;
  static std::atomic<steady_clock::rep> last{0};  // steady_clock ticks of the last trim
  const steady_clock::rep now = steady_clock::now().time_since_epoch().count();
  steady_clock::rep before = last.load();
  if (before != 0 && steady_clock::duration(now - before) < std::chrono::seconds(1)) return;
  if (!last.compare_exchange_strong(before, now)) return;  // another scheduler trims just now
  ::malloc_trim(0);
#endif
}

Result<const Workflow*> find_workflow(const WorkflowConfig& config, const std::string& id) {
  const Workflow* wf = config.find(id);
  if (!wf) return fail(fmt::format("unknown workflow \"{}\"", id), ErrorCode::kNotFound);
  return wf;
}

std::set<std::string> workflow_ids(const WorkflowConfig& config) {
  std::set<std::string> ids;
  for (const auto& [id, _] : config.workflows) ids.insert(id);
  return ids;
}

// "2000 calls, 22000 saved: 22000 by listing, 0 by back-off" (issue 28).
std::string data_check_summary(const StepReport& r) {
  const int by_listing = r.data_checks - r.data_check_calls;
  return fmt::format("{} calls, {} saved: {} by listing, {} by back-off", r.data_check_calls,
                     by_listing + r.data_checks_deferred, by_listing, r.data_checks_deferred);
}

void log_step(const std::string& label, const StepReport& report) {
  if (!spdlog::should_log(spdlog::level::info)) return;
  std::string phases;
  for (const auto& [name, took] : report.phases) {
    phases += fmt::format("{}{} {}", phases.empty() ? "" : ", ", name, took.count());
  }
  spdlog::info(
      "step at {} finished in {} ms: {} workflows, {} changes, {} submitted, {} errors; {} "
      "external calls ({} failed{}), {} data checks ({}); ms by phase: {}",
      label, report.duration.count(), report.workflows, report.changed, report.submitted,
      report.errors.size(), report.external_calls, report.external_call_errors,
      report.slowest_call.empty() ? "" : ", slowest " + report.slowest_call, report.data_checks,
      data_check_summary(report), phases.empty() ? "none" : phases);
}

}  // namespace

std::set<std::string> Scheduler::running_backfills(const WorkflowConfig& config) {
  std::set<std::string> running;
  auto plans = Backfills(config, db_).list();
  if (!plans) return running;  // the pump after the step reports the error
  for (const BackfillPlan& plan : *plans) {
    if (plan.state == BackfillState::kRunning) running.insert(plan.id);
  }
  return running;
}

Scheduler::Scheduler(WorkflowSource& source, StateDatabase& db, FileSystemResolver& file_systems)
    : source_(source),
      db_(db),
      file_systems_(file_systems),
      inline_executor_(make_inline_executor()),
      executor_(inline_executor_.get()),
      own_predictor_(std::make_unique<HistoryPredictor>()),
      predictor_(own_predictor_.get()),
      data_checks_(std::make_unique<detail::DataCheckMemory>()) {
  listeners_.push_back(own_predictor_.get());
}

Scheduler::~Scheduler() = default;

void Scheduler::set_executor(Executor& executor) { executor_ = &executor; }

void Scheduler::set_data_check_backoff(DataCheckBackoff backoff) {
  data_checks_->configure(backoff);
}

std::optional<Time> Scheduler::next_data_check(const SlotId& slot, Time now) const {
  return data_checks_->next_check(slot, now);
}

void Scheduler::add_listener(SchedulerListener& listener) { listeners_.push_back(&listener); }

void Scheduler::notify(const std::vector<SlotChange>& changes) {
  if (changes.empty()) return;
  for (SchedulerListener* l : listeners_) l->on_slot_changes(changes);
}

void Scheduler::set_config(WorkflowConfigPtr config) {
  MutexLock lock(config_mutex_);
  config_ = std::move(config);
}

WorkflowConfigPtr Scheduler::config() {
  {
    MutexLock lock(config_mutex_);
    if (config_) return config_;
  }
  return reload();
}

WorkflowConfigPtr Scheduler::refresh() {
  auto config = source_.load();  // re-evaluates only the files that changed
  set_config(config);
  return config;
}

WorkflowConfigPtr Scheduler::reload() {
  source_.clear_cache();
  auto config = source_.load();
  set_config(config);
  return config;
}

StepReport Scheduler::step(Time now, const std::optional<std::set<std::string>>& ids,
                           std::string_view cause) {
  // A partial step says so, and why, in both of its lines.
  const std::string label =
      cause.empty() ? format_time(now) : fmt::format("{} ({})", format_time(now), cause);
  const auto started = clock_->monotonic();
  auto config = source_.load();
  set_config(config);
  StepReport report;
  const MaintenanceMode mode = maintenance_mode(report);
  if (mode == MaintenanceMode::kPause) {
    spdlog::info("step at {}: maintenance pause, nothing done", format_time(now));
    report.now = now;
  } else {
    spdlog::info("step at {} started ({} workflows loaded, {} load errors, {} calls at a time)",
                 label, config->workflows.size(), config->errors.size(), executor_->width());
    // A step of chosen workflows follows an event (or an operator): their data is checked now.
    if (ids) data_checks_->reset(*ids);
    std::vector<std::string> errors = std::move(report.errors);
    // Live slots first: the step submits the slots the running plans admitted before, and the
    // plans admit their next slots after it, so that the admissions' durable writes never
    // delay a live submission (they had doubled its p99: bench/README.md, issue 29).
    report = detail::run_step(*config, now, ids,
                              {db_, file_systems_, *executor_, *clock_,
                               [this](const std::vector<SlotChange>& changes) { notify(changes); },
                               mode == MaintenanceMode::kDrain, guard_, running_backfills(*config),
                               predictor_, data_checks_.get(), &limiter_, outbox_});
    BackfillPump backfills = admit_backfills(*config, now, mode);
    errors.insert(errors.end(), backfills.errors.begin(), backfills.errors.end());
    if (!ids) data_checks_->retain(workflow_ids(*config));
    report.errors.insert(report.errors.begin(), errors.begin(), errors.end());
    report.backfills = std::move(backfills.plans);
    report.backfill_admitted = static_cast<int>(backfills.admitted.size());
  }
  report.maintenance = mode;
  report.duration =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_->monotonic() - started);
  log_step(label, report);
  for (SchedulerListener* l : listeners_) l->on_step(report);
  if (held_much(report)) release_free_memory();
  return report;
}

BackfillPump Scheduler::admit_backfills(const WorkflowConfig& config, Time now,
                                        MaintenanceMode mode) {
  if (mode != MaintenanceMode::kOff) {  // drain: nothing new starts, plans included
    BackfillPump idle;                  // (their progress still goes to /metrics)
    if (auto plans = Backfills(config, db_).list()) idle.plans = std::move(*plans);
    return idle;
  }
  if (auto ok = guard_->confirm(); !ok) return {};  // a node that lost its lease admits nothing
  BackfillPump pump = pump_backfills(config, db_, now);
  std::vector<SlotChange> changes;
  for (const auto& [from, to] : pump.admitted) changes.push_back({from, to, now, "backfill"});
  notify(changes);
  return pump;
}

MaintenanceMode Scheduler::maintenance_mode(StepReport& report) {
  auto maintenance = db_.maintenance();
  if (maintenance) return maintenance->mode;
  // Unreadable: the operator may have asked for a pause, so do nothing rather than submit.
  spdlog::error("maintenance mode unreadable, the step does nothing: {}",
                maintenance.error().message);
  report.errors.push_back("maintenance: " + maintenance.error().message);
  return MaintenanceMode::kPause;
}

Result<const Workflow*> Scheduler::find_slot(const WorkflowConfig& config,
                                             const std::string& workflow, Time slot_time) {
  auto wf = find_workflow(config, workflow);
  if (!wf) return wf;
  auto is_slot = is_slot_time(*(*wf)->schedule, slot_time, config.schedule_context());
  if (!is_slot) return tl::unexpected(is_slot.error());
  if (!*is_slot || slot_time < (*wf)->start_time) {
    return fail(
        fmt::format("{} is not a slot of workflow \"{}\"", format_time(slot_time), workflow),
        ErrorCode::kNotFound);
  }
  return wf;
}

Result<SlotState> Scheduler::rerun(const std::string& workflow, Time slot_time, Time now,
                                   const std::string& by) {
  auto config = this->config();
  auto wf = find_slot(*config, workflow, slot_time);
  if (!wf) return tl::unexpected(wf.error());
  const SlotId id{workflow, slot_time};
  auto stored = db_.get_slot(id);
  if (!stored) return tl::unexpected(stored.error());
  if (stored->has_value()) {  // datasets: a rerun SUCCESS slot's done flags go first
    DatasetStep datasets(*config, db_, file_systems_, now, *guard_);
    if (auto ok = datasets.before_rerun(**wf, **stored); !ok) return tl::unexpected(ok.error());
  }
  // A slot with nothing stored may be rerun: that is how backfill marks old slots.
  auto next = stored->has_value() ? (*stored)->rerun() : SlotState::waiting(id);
  if (!next) return next;
  next->deadline = effective_deadline(**wf, *next);  // fixed when first stored
  data_checks_->reset({workflow});                   // its data is checked at the next step
  if (auto marked = db_.mark_rerun(id, now); !marked) return tl::unexpected(marked.error());
  if (auto written = db_.put_slots({*next}); !written) return tl::unexpected(written.error());
  spdlog::info("slot {}: rerun requested ({} -> WAITING)", to_string(id),
               stored->has_value() ? to_string((*stored)->status) : "no state");
  notify({SlotChange{*stored, *next, now, by}});
  return next;
}

Result<SlotState> Scheduler::kill(const std::string& workflow, Time slot_time, Time now,
                                  const std::string& by) {
  auto config = this->config();
  auto wf = find_slot(*config, workflow, slot_time);
  if (!wf) return tl::unexpected(wf.error());
  const SlotId id{workflow, slot_time};
  auto stored = db_.get_slot(id);
  if (!stored) return tl::unexpected(stored.error());
  const SlotState current = stored->value_or(SlotState::waiting(id));
  auto next = current.killed();
  if (!next) return next;
  next->deadline = effective_deadline(**wf, *next);  // fixed when first stored
  if (current.status == SlotStatus::kRunning && current.external_id) {
    if (auto ok = guard_->confirm(); !ok) {  // a node that lost its lease kills nothing
      return fail(fmt::format("not killing {} of slot {}: {}", *current.external_id, to_string(id),
                              ok.error().message),
                  ok.error().code);
    }
    if (auto killed = (*wf)->service->kill(id, *current.external_id); !killed) {
      return fail(fmt::format("killing {} of slot {} failed: {}", *current.external_id,
                              to_string(id), killed.error().message));
    }
  }
  if (auto written = put_changes(db_, outbox_, {SlotChange{*stored, *next, now, by}}); !written) {
    return tl::unexpected(written.error());
  }
  if (current.status == SlotStatus::kRunning) {  // datasets: the attempt's incomplete outputs go
    DatasetStep(*config, db_, file_systems_, Time{}, *guard_).after_failure(**wf, *next);
  }
  detail::log_change(&current, *next);
  notify({SlotChange{*stored, *next, now, by}});
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
  detail::StepTriggerContext context(now, db_, file_systems_);
  auto tree = (*wf)->trigger->evaluate(slot_time, context);
  if (!tree) return tree;
  auto stored = db_.get_slot(SlotId{workflow, slot_time});  // retry back-off (retry_backoff.h)
  if (!stored) return tl::unexpected(stored.error());
  return stored->has_value() ? with_retry_backoff(**stored, std::move(*tree), now) : *tree;
}

Result<void> put_changes(StateDatabase& db, SlotOutbox* outbox,
                         const std::vector<SlotChange>& changes) {
  std::vector<SlotState> states;
  states.reserve(changes.size());
  for (const SlotChange& c : changes) states.push_back(c.to);
  if (!outbox) return db.put_slots(states);
  auto ticket = outbox->prepare(changes);
  if (!ticket) return tl::unexpected(ticket.error());
  auto written = db.put_slots_after(states, [&] { return outbox->sync(*ticket); });
  outbox->settle(*ticket, written.has_value());
  return written;
}

}  // namespace celos
