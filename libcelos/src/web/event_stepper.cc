// Event-driven partial steps (celos/event_stepper.h).
#include "celos/event_stepper.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace celos {
namespace {

// "partial: 3 workflows after announcement 2, slot 1 (a, b, c)"; at most 5 ids named.
std::string cause_of(const EventStepper::Batch& batch);

}  // namespace

EventStepper::EventStepper(const Api& api, SerialWorker& worker, EventStepperOptions options)
    : api_(api), worker_(worker), options_(std::move(options)) {
  if (options_.settle.count() > 0) timer_ = std::make_unique<DeadlineTimer>(*options_.clock);
}

void EventStepper::post(EventSource source, const std::vector<std::string>& workflows) {
  const auto at = options_.clock->monotonic();
  Batch events;
  for (const std::string& id : workflows) events.emplace(id, Pending{source, at});
  merge(std::move(events));
}

void EventStepper::post_file_event() {
  std::vector<std::string> checkers;
  {
    MutexLock lock(mutex_);
    for (const auto& [uri, workflows] : dependents().of_file_system) {
      const bool local = options_.is_local ? options_.is_local(uri) : uri.rfind("file:", 0) == 0;
      if (local) checkers.insert(checkers.end(), workflows.begin(), workflows.end());
    }
  }
  post(EventSource::kFile, checkers);
}

void EventStepper::merge(Batch events) {
  if (events.empty()) return;
  {
    MutexLock lock(mutex_);
    if (stopping_) return;
    last_event_ = options_.clock->monotonic();
    if (pending_.empty()) first_pending_ = last_event_;
    for (auto& [id, event] : events) pending_.emplace(id, event);  // the earliest event stays
    if (queued_ || waiting_to_settle_) return;  // the coming partial step takes these too
    if (timer_) {
      waiting_to_settle_ = true;
      timer_->after(options_.settle, [this] { settled(); });
      return;
    }
  }
  queue_batch();
}

void EventStepper::settled() {
  {
    MutexLock lock(mutex_);
    if (stopping_ || pending_.empty()) {
      waiting_to_settle_ = false;
      return;
    }
    const auto due = std::min(last_event_ + options_.settle, first_pending_ + options_.max_delay);
    if (options_.clock->monotonic() < due) {
      timer_->at(due, [this] { settled(); });
      return;
    }
    waiting_to_settle_ = false;
  }
  queue_batch();
}

void EventStepper::queue_batch() {
  {
    MutexLock lock(mutex_);
    if (queued_) return;
    queued_ = true;
  }
  if (!worker_.post([this] { run_batch(); })) {
    MutexLock lock(mutex_);
    queued_ = false;  // stopping: the periodic step's successor (a restart) picks them up
  }
}

void EventStepper::stop() {
  MutexLock lock(mutex_);
  stopping_ = true;
  pending_.clear();
}

int EventStepper::partial_steps() const {
  MutexLock lock(mutex_);
  return partial_steps_;
}

void EventStepper::run_batch() {
  std::set<std::string> ids;
  std::string cause;
  {
    MutexLock lock(mutex_);
    queued_ = false;
    if (stopping_ || pending_.empty()) return;
    in_flight_.swap(pending_);
    pending_.clear();
    for (const auto& [id, _] : in_flight_) ids.insert(id);
    cause = cause_of(in_flight_);
  }
  try {
    api_.step(api_.now(), ids, cause);
  } catch (const std::exception& e) {
    spdlog::error("partial step failed: {}", e.what());
  }
  MutexLock lock(mutex_);
  in_flight_.clear();
  ++partial_steps_;
}

void EventStepper::on_slot_changes(const std::vector<SlotChange>& changes) {
  const auto now = options_.clock->monotonic();
  Batch woken;
  {
    MutexLock lock(mutex_);
    for (const SlotChange& change : changes) {
      const std::string& workflow = change.to.id.workflow;
      if (change.from && change.from->status == change.to.status) continue;
      auto event = in_flight_.find(workflow);
      if (event != in_flight_.end() && change.to.status == SlotStatus::kRunning &&
          options_.metrics != nullptr) {
        const std::chrono::duration<double> took = now - event->second.at;
        options_.metrics->observe_event_to_submit(event->second.source, took.count());
      }
      // What this change wakes inherits the event that caused it (a chain measures end to end).
      const Pending origin =
          event != in_flight_.end() ? event->second : Pending{EventSource::kSlot, now};
      for (const std::string& dependent : dependents().workflow(workflow)) {
        woken.emplace(dependent, origin);
      }
      // A slot that became READY is submitted by the next step, and a job that ended frees a
      // place for the strategy: its own workflow goes again at once.
      const bool ended = change.from && change.from->status == SlotStatus::kRunning;
      if (change.to.status == SlotStatus::kReady || ended) woken.emplace(workflow, origin);
    }
  }
  merge(std::move(woken));
}

const WorkflowDependents& EventStepper::dependents() {
  WorkflowConfigPtr config = options_.config ? options_.config() : nullptr;
  if (config && config != indexed_) {
    index_ = workflow_dependents(*config, api_.now());
    indexed_ = std::move(config);
  }
  return index_;
}

namespace {

std::string cause_of(const EventStepper::Batch& batch) {
  std::map<std::string_view, int> by_source;
  std::string names;
  int named = 0;
  for (const auto& [id, event] : batch) {
    ++by_source[to_string(event.source)];
    if (named++ < 5) names += (names.empty() ? "" : ", ") + id;
  }
  if (named > 5) names += ", ...";
  std::string sources;
  for (const auto& [source, n] : by_source) {
    sources += fmt::format("{}{} {}", sources.empty() ? "" : ", ", source, n);
  }
  return fmt::format("partial: {} workflow{} after {}: {}", batch.size(),
                     batch.size() == 1 ? "" : "s", sources, names);
}

}  // namespace
}  // namespace celos
