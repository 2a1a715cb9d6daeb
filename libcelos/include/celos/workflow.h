// Workflows and the set of workflows loaded from the workflow files (SPEC §3).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "celos/dataset.h"
#include "celos/deadline.h"
#include "celos/error.h"
#include "celos/external_service.h"
#include "celos/schedule.h"
#include "celos/service_limits.h"
#include "celos/strategy.h"
#include "celos/time.h"
#include "celos/trigger.h"

namespace celos {

struct Contact {
  std::string name;
  std::string email;
};

struct Workflow {
  std::string id;
  std::shared_ptr<const Schedule> schedule;
  std::shared_ptr<const SchedulingStrategy> strategy;
  TriggerPtr trigger;
  ExternalServicePtr service;
  Time start_time{};  // 1970-01-01T00:00Z: no slot before it
  int max_retry_count = 0;
  std::int64_t wait_timeout_seconds = 2147483647;
  std::optional<std::string> url;
  std::vector<Contact> contacts;
  std::string file;  // the workflow file that defined it (for messages)
  // Datasets (SPEC §14; celos/dataset.h): what the slots read and write. A workflow with inputs
  // and no trigger gets a derived trigger when the workflows are assembled.
  std::vector<DatasetUse> inputs;
  std::vector<DatasetUse> outputs;
  bool atomic_outputs = true;
  int line = 0;  // the line of its defineWorkflow call in `file` (0 if unknown)
  // Retry back-off (SPEC §13): after the k-th failure a slot waits
  // min(retry_delay_seconds * retry_backoff_factor^(k-1), max_retry_delay_seconds) seconds.
  std::int64_t retry_delay_seconds = 0;
  double retry_backoff_factor = 2;
  std::int64_t max_retry_delay_seconds = 3600;
  // Notifications (SPEC §13): a JSON POST to `webhook` on every change into one of `on`.
  struct Notify {
    std::vector<SlotStatus> on;
    std::string webhook;
  };
  std::vector<Notify> notify;
  // Deadlines (celos/deadline.h): when each new slot must be SUCCESS, and what a miss does.
  std::optional<DeadlineRule> deadline;
};

// The longest workflow id, in bytes of UTF-8 (SPEC §16).
inline constexpr std::size_t kMaxWorkflowIdBytes = 200;

// A workflow id is a non-blank string of at most kMaxWorkflowIdBytes without `/` or control
// characters, and not `.` or `..`.
[[nodiscard]] Result<void> validate_workflow_id(std::string_view id);

// An error of one workflow file: its name, the line (0 if unknown) and what was wrong.
struct LoadError {
  std::string file;
  int line = 0;
  std::string message;
};

// One loaded set of workflows. Immutable once built, shared between the scheduler and readers.
struct WorkflowConfig {
  std::map<std::string, Workflow, std::less<>> workflows;
  std::vector<LoadError> errors;
  // The declared datasets (celos.dataset), by id.
  std::map<std::string, Dataset, std::less<>> datasets;
  // The celos.serviceLimits declarations, by endpoint (celos/service_limits.h).
  std::map<std::string, ServiceLimits, std::less<>> service_limits;

  const Workflow* find(std::string_view id) const;
  // Datasets (dataset_config.cc): the workflow that outputs a dataset (at most one), the
  // workflows that read it, and what a trigger needs to know about one input of a workflow.
  const Workflow* producer_of(std::string_view dataset) const;
  std::vector<const Workflow*> consumers_of(std::string_view dataset) const;
  std::optional<ResolvedInput> resolve_input(const Workflow& workflow, const DatasetUse& use) const;
  // A ScheduleContext whose lookup finds the schedules of this config's workflows.
  ScheduleContext schedule_context() const;
};

using WorkflowConfigPtr = std::shared_ptr<const WorkflowConfig>;

// A celos.dataset declaration and where it was made.
struct DatasetDeclaration {
  Dataset dataset;
  std::string file;
  int line = 0;
};

// Runs once all workflow files are loaded (SPEC §16 "Datasets"): registers `declarations` (in
// file order; a different declaration of a known id is a load error of the later file), checks
// the workflows' inputs and outputs (unknown dataset, second producer, an output path that does
// not tell the slots apart, a cycle whose offsets add up to 0) and derives the trigger of each
// workflow that has inputs and no trigger. A workflow that fails a check is removed from
// `config` and its error appended to `config.errors`.
void link_datasets(WorkflowConfig& config, const std::vector<DatasetDeclaration>& declarations);

// Where workflows come from: the JavaScript loader (celos/workflow_loader.h), or a fixed set in
// tests. load() is called at the start of every step and must be cheap when nothing changed
// (returning the same config object). Called by one thread at a time.
class WorkflowSource {
 public:
  virtual ~WorkflowSource() = default;
  virtual WorkflowConfigPtr load() = 0;
  // Forgets any cache so that the next load() evaluates everything again (/clear-cache).
  virtual void clear_cache() = 0;
};

// A source that always returns the same workflows (tests, tools that build workflows in C++).
std::unique_ptr<WorkflowSource> make_static_workflow_source(WorkflowConfigPtr config);

}  // namespace celos
