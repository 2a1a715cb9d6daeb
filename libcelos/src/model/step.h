// The scheduler step of SPEC §4, with the external calls of different workflows running
// concurrently on an Executor (SPEC §10). Internal to libcelos: Scheduler::step() is the API.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "celos/deadline.h"
#include "celos/executor.h"
#include "celos/lease_guard.h"
#include "celos/scheduler.h"
#include "celos/service_limits.h"

namespace celos::detail {

class DataCheckMemory;  // model/data_check_memory.h

struct StepEnvironment {
  StateDatabase& db;
  FileSystemResolver& file_systems;
  Executor& executor;
  // Measures the phases and the external calls (monotonic()); the step's `now` is given.
  Clock& clock;
  // Called with the changes of each durable write, on the step's thread.
  std::function<void(const std::vector<SlotChange>&)> committed;
  // Maintenance drain (SPEC §13): nothing new is submitted (READY slots wait); RUNNING slots
  // are followed and triggers evaluated as usual.
  bool drain = false;
  // The fence of side effects (celos/lease_guard.h); none: always current.
  LeaseGuard* guard = nullptr;
  // The running backfill plans (celos/backfill.h): a slot of one of them is submitted with the
  // capacity the live slots left; a slot of any other plan is not submitted.
  std::set<std::string> running_backfills = {};
  // Predicts when slots finish, for their deadlines' AT_RISK; none: no slot is ever at risk.
  const DeadlinePredictor* predictor = nullptr;
  // What data checks remember between steps (issue 28: back-off, directories too big to list);
  // none: every WAITING slot is checked.
  DataCheckMemory* data_checks = nullptr;
  // The tokens and RUNNING counts of celos.serviceLimits, shared by all steps of the server
  // (celos/service_limits.h); none: no limits apply.
  ServiceLimiter* limiter = nullptr;
  // What is written with the slot changes (celos/scheduler.h); none: nothing.
  SlotOutbox* outbox = nullptr;
};

StepReport run_step(const WorkflowConfig& config, Time now,
                    const std::optional<std::set<std::string>>& ids, StepEnvironment env);

// The next state of a slot whose attempt failed (a refused submission, a failed job): WAITING
// for a retry while retries are left, else FAILURE; `message` says why.
SlotState failed_attempt(const Workflow& workflow, const SlotState& slot, std::string message,
                         Time now);

// Logs a slot's change at info level (`from` null: the slot was not stored, so WAITING). Formats
// nothing when info is off: a simulated fleet changes thousands of slots a step.
void log_change(const SlotState* from, const SlotState& to);

}  // namespace celos::detail
