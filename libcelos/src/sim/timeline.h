// The simulation's record of slot changes: the JSON-lines timeline and what the summary and the
// expectations need from it (wait and run times, failures). Internal to sim/.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "celos/scheduler.h"

namespace celos::sim {

// One line of the timeline: {"at","workflow","slot","from","to","retryCount","externalID",
// "message","by"} (externalID and message only when set; from null when nothing was stored).
std::string timeline_line(const SlotChange& change);

// A JSON string literal.
std::string json_quote(std::string_view text);

struct Durations {
  std::int64_t count = 0, total_ms = 0, max_ms = 0;
  void add(std::chrono::milliseconds d);
};

struct WorkflowTimes {
  Durations wait;  // slot time -> its first RUNNING (of an attempt with retry count 0)
  Durations run;   // RUNNING -> the attempt's end
};

// Listens to the scheduler. Changes are written when flush() is called (after each step and each
// operator action), sorted by workflow and slot time (a slot's own changes keep their order), so
// that the timeline does not depend on the order the step's tasks finished in.
class Timeline final : public SchedulerListener {
 public:
  explicit Timeline(std::ostream* out) : out_(out) {}
  void on_slot_changes(const std::vector<SlotChange>& changes) override;
  void on_step(const StepReport& report) override;
  void flush();

  const std::map<std::string, WorkflowTimes>& times() const { return times_; }
  // Every change to FAILURE: when, and which slot.
  const std::vector<std::pair<Time, SlotId>>& failures() const { return failures_; }
  std::int64_t changes() const { return changes_; }
  std::int64_t step_errors() const { return step_errors_; }
  const std::string& first_step_error() const { return first_step_error_; }

 private:
  void account(const SlotChange& c);

  std::ostream* out_;  // nullptr: no timeline kept
  std::vector<SlotChange> pending_;
  std::map<std::string, WorkflowTimes> times_;
  std::map<SlotId, Time> running_since_;
  std::vector<std::pair<Time, SlotId>> failures_;
  std::int64_t changes_ = 0, step_errors_ = 0;
  std::string first_step_error_;
};

}  // namespace celos::sim
