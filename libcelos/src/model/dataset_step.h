// What the scheduler step does for datasets (SPEC §14, §16 "Datasets"), as hooks that the step
// calls at four points, so that scheduler.cc stays about slots:
//
//   before_submit   a pick is about to be submitted: its mode-new inputs get their consumed set
//                   (stored in the RUNNING record, so a crash never consumes twice; fewer than
//                   minInstances: the pick goes back to WAITING instead), leftovers
//                   of its outputs without a done flag are removed, and the variables and
//                   environment of its inputs are returned for the service's submit.
//   before_success  RUNNING -> SUCCESS of a command or Slurm slot: its done flags are written
//                   first; if that fails the slot stays RUNNING (retried next step).
//   after_failure   RUNNING -> FAILURE or KILLED: output instances without a done flag go.
//   before_rerun    a SUCCESS slot is rerun: its done flags go first.
//
// Removing outputs and writing done flags are fenced: the LeaseGuard is asked right before (once
// per hook call, and only when there is something to remove or write); when it fails nothing is
// touched and the hook answers its error.
//
// Removal goes through the FileSystem interface, is logged, and only ever touches the instance
// path expanded from the dataset's template with the slot's time (file systems remove a
// symlink itself, never what it points to).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "celos/dataset.h"
#include "celos/dataset_reads.h"
#include "celos/file_system.h"
#include "celos/lease_guard.h"
#include "celos/state_db.h"
#include "celos/workflow.h"

namespace celos {

// The dataset answers of a TriggerContext, read from the state database and cached for the
// context's lifetime (one step or one /trigger-status read).
class DatasetLookups {
 public:
  explicit DatasetLookups(StateDatabase& db) : db_(db) {}
  [[nodiscard]] Result<SlotStatus> slot_status(const std::string& workflow_id, Time time);
  [[nodiscard]] Result<std::vector<SlotState>> stored_slots(const std::string& workflow_id,
                                                            Time start, Time end);
  [[nodiscard]] Result<bool> instance_announced(const std::string& dataset_id, Time time);
  [[nodiscard]] Result<std::vector<Time>> announced_instances(const std::string& dataset_id,
                                                              Time start, Time end);

 private:
  struct Loaded {
    Time start{}, end{};
    std::vector<SlotState> slots;
  };
  struct Announced {
    Time start{}, end{};
    std::set<Time> times;
  };
  Result<std::map<std::string, Announced>::iterator> load_announced(const std::string& dataset_id,
                                                                    Time start, Time end);
  StateDatabase& db_;
  std::map<std::string, Loaded> slots_;
  std::map<std::string, Announced> announced_;
};

// What before_submit decided: submit with `context`, or (no context) the pick goes back to
// WAITING because a mode-new input has fewer than minInstances new instances at submit time
// (earlier picks or slots took them since the trigger looked); `waiting` says so.
struct SubmitDecision {
  std::optional<SubmitContext> context;
  std::string waiting;
};

class DatasetStep {
 public:
  DatasetStep(const WorkflowConfig& config, StateDatabase& db, FileSystemResolver& file_systems,
              Time now, LeaseGuard& guard = always_current_lease_guard())
      : config_(config), db_(db), file_systems_(file_systems), now_(now), guard_(guard) {}

  // `earlier` are the picks of the same workflow submitted before this one in this step.
  [[nodiscard]] Result<SubmitDecision> before_submit(const Workflow& workflow, SlotState& pick,
                                                     const std::vector<SlotState>& earlier);
  [[nodiscard]] Result<void> before_success(const Workflow& workflow, const SlotState& slot);
  void after_failure(const Workflow& workflow, const SlotState& slot);
  [[nodiscard]] Result<void> before_rerun(const Workflow& workflow, const SlotState& from);

 private:
  // Removes the instances of `slot`'s outputs that exist without their done flag.
  [[nodiscard]] Result<void> remove_incomplete_outputs(const WorkflowConfig& config,
                                                       const Workflow& workflow, Time slot,
                                                       FileSystemResolver& file_systems,
                                                       std::string_view why);
  // The guard's answer, as the error of `what` when the lease is lost.
  [[nodiscard]] Result<void> confirm(const std::string& what);

  const WorkflowConfig& config_;
  StateDatabase& db_;
  FileSystemResolver& file_systems_;
  Time now_;
  LeaseGuard& guard_;
};

// A TriggerContext over the state database and file systems for one of the API's dataset reads
// (instances, lineage) at `now`: its state database answers are ranged reads cached for the
// context's lifetime (DatasetLookups); file systems are asked every time.
std::unique_ptr<TriggerContext> make_dataset_read_context(Time now, StateDatabase& db,
                                                          FileSystemResolver& file_systems);

// The instance of `out` written by slot `slot` of its producer.
Time output_instance(const DatasetUse& out, Time slot);

// May celos remove this instance path? Absolute, no `.`/`..`/empty components, not the root.
[[nodiscard]] Result<void> check_removable(const std::string& path);

// One output instance as found (OutputInstanceState, celos/dataset_reads.h): whether it
// exists and is complete (done flag).
[[nodiscard]] Result<OutputInstanceState> inspect_output(const Dataset& ds, Time instance,
                                                         FileSystemResolver& file_systems);

}  // namespace celos
