// The dependency index of event-driven steps (celos/workflow_dependents.h).
#include "celos/workflow_dependents.h"

#include <spdlog/spdlog.h>

#include "celos/trigger.h"

namespace celos {
namespace {

// Answers like an empty world (no slot stored, nothing announced, no path) and records the
// questions. Never fails: a trigger that still errs is logged and skipped.
class ProbeContext final : public TriggerContext {
 public:
  explicit ProbeContext(Time now) : now_(now) {}

  Time now() const override { return now_; }
  Result<bool> path_exists(const std::string& fs_uri, const std::string& /*path*/) override {
    file_systems.insert(fs_uri);
    return false;
  }
  Result<bool> slot_succeeded(const std::string& workflow_id, Time /*time*/) override {
    workflows.insert(workflow_id);
    return false;
  }
  Result<SlotStatus> slot_status(const std::string& workflow_id, Time /*time*/) override {
    workflows.insert(workflow_id);
    return SlotStatus::kWaiting;
  }
  Result<std::vector<SlotState>> stored_slots(const std::string& workflow_id, Time /*start*/,
                                              Time /*end*/) override {
    workflows.insert(workflow_id);
    return std::vector<SlotState>{};
  }
  Result<bool> instance_announced(const std::string& dataset_id, Time /*time*/) override {
    datasets.insert(dataset_id);
    return false;
  }
  Result<std::vector<Time>> announced_instances(const std::string& dataset_id, Time /*start*/,
                                                Time /*end*/) override {
    datasets.insert(dataset_id);
    return std::vector<Time>{};
  }

  std::set<std::string> workflows;
  std::set<std::string> datasets;
  std::set<std::string> file_systems;

 private:
  Time now_;
};

const std::set<std::string>& none() {
  static const std::set<std::string> empty;
  return empty;
}

}  // namespace

const std::set<std::string>& WorkflowDependents::workflow(std::string_view id) const {
  auto it = of_workflow.find(id);
  return it == of_workflow.end() ? none() : it->second;
}

const std::set<std::string>& WorkflowDependents::dataset(std::string_view id) const {
  auto it = of_dataset.find(id);
  return it == of_dataset.end() ? none() : it->second;
}

WorkflowDependents workflow_dependents(const WorkflowConfig& config, Time probe_time) {
  WorkflowDependents index;
  for (const auto& [id, wf] : config.workflows) {
    for (const DatasetUse& in : wf.inputs) {
      index.of_dataset[in.dataset].insert(id);
      if (const Workflow* producer = config.producer_of(in.dataset)) {
        index.of_workflow[producer->id].insert(id);
      }
    }
    if (!wf.trigger) continue;
    ProbeContext probe(probe_time);
    auto evaluated = wf.trigger->evaluate(probe_time, probe);
    if (!evaluated) {
      spdlog::warn("events: the trigger of {} could not be probed: {}", id,
                   evaluated.error().message);
    }
    for (const std::string& on : probe.workflows) index.of_workflow[on].insert(id);
    for (const std::string& on : probe.datasets) index.of_dataset[on].insert(id);
    for (const std::string& on : probe.file_systems) index.of_file_system[on].insert(id);
  }
  return index;
}

}  // namespace celos
