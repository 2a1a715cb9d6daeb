// One scenario's simulated world wired to the real Scheduler (sim/services.h), and the
// simulation loop over it. Internal to sim/; celos/simulate.h is the API.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "celos/clock.h"
#include "celos/scheduler.h"
#include "sim/scenario.h"
#include "sim/services.h"
#include "sim/timeline.h"

namespace celos::sim {

// A directory under $TMPDIR, removed with its contents when the object dies.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Copies the regular files under `from` to `to` (made), replacing each key of `substitute` by
// its value in their text. kInvalid naming `from` when it is not a directory.
[[nodiscard]] Result<void> copy_tree(const std::string& from, const std::string& to,
                                     const std::map<std::string, std::string>& substitute);

// A WorkflowSource that hands out the workflows of the JavaScript files with each workflow's
// service replaced by its simulated one (kept across loads, so that its jobs live on) and its
// schedule's times over the scenario's range computed once. `scenario` must outlive it.
std::unique_ptr<WorkflowSource> make_sim_workflow_source(std::unique_ptr<WorkflowSource> js,
                                                         const Scenario& scenario,
                                                         const Clock& clock,
                                                         const Outages& outages);

struct World {
  // Copies the workflow files into `scratch`, loads them, wires the scheduler; the timeline goes
  // to `timeline` (may be null).
  World(const Scenario& scenario, const std::string& scratch, std::ostream* timeline);

  const Scenario& scenario;
  ManualClock clock;
  Outages outages;
  SimFileSystems file_systems;
  std::unique_ptr<StateDatabase> db;
  std::unique_ptr<WorkflowSource> source;
  // The step's workflows run on the machine's cores, as celos-server's --io-concurrency runs
  // their calls: the outcome is the same as one at a time (SPEC §10), the timeline is sorted.
  std::unique_ptr<Executor> executor;
  Scheduler scheduler;
  Timeline timeline;
};

}  // namespace celos::sim
