// Which workflows wait on what (issue 28): the index the event-driven steps use to step exactly
// the workflows an event may have made ready.
//
// Triggers are opaque trees, so each workflow's trigger is evaluated once against a probing
// context that answers "not there" to everything and records what was asked: the slots of which
// workflows (successTrigger, statusTrigger, a dataset's producer), which datasets' announcements,
// and which paths. Combined triggers evaluate every child (none short-circuits), so nothing is
// missed. Pure: no I/O, a function of the config. Build once per loaded config.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "celos/time.h"
#include "celos/workflow.h"

namespace celos {

struct WorkflowDependents {
  // A workflow -> the workflows whose triggers read its slots' states.
  std::map<std::string, std::set<std::string>, std::less<>> of_workflow;
  // A dataset -> the workflows that read it (its inputs, or a trigger asking for announcements).
  std::map<std::string, std::set<std::string>, std::less<>> of_dataset;
  // A file system URI ("" = the default one) -> the workflows whose triggers check paths on it
  // (hdfsCheckTrigger, the done flags of datasets without a producer).
  std::map<std::string, std::set<std::string>, std::less<>> of_file_system;

  // The dependents of `workflow` / `dataset`, empty when none.
  const std::set<std::string>& workflow(std::string_view id) const;
  const std::set<std::string>& dataset(std::string_view id) const;
};

// The index of `config` (`probe_time`: the slot time the triggers are probed at; any slot works).
WorkflowDependents workflow_dependents(const WorkflowConfig& config, Time probe_time);

}  // namespace celos
