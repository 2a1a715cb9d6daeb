// `celos simulate` and `celos plan` (issue 25; docs/simulate.md).
//
// simulate() runs the real Scheduler step over simulated time, in one process, on simulated
// services (libcelos/src/sim: an in-memory state database, file systems and external services
// behind celos's own interfaces, and a ManualClock). A scenario file names the workflows and
// defaults directories, the time range and step interval, and scripts the world: data arriving
// (on time, late, never; announcements), how jobs end, what operators do, outages. It writes a
// timeline of every slot change (JSON lines, byte-identical across runs of one scenario) and a
// summary, and checks the scenario's expectations. Nothing real is touched: the workflow files
// are copied into a temporary directory (removed at the end), state lives in memory.
//
// plan() loads two versions of a workflow set and tells, for the next days, which slots the
// new one adds, removes or moves and which workflows changed their trigger, service, schedule
// or datasets (the question a deploy asks).
//
// Not thread-safe; one call at a time.
#pragma once

#include <iosfwd>
#include <map>
#include <optional>
#include <string>

#include "celos/error.h"
#include "celos/time.h"

namespace celos {

struct SimulateOptions {
  std::string scenario = {};       // the scenario file (JSON)
  std::optional<Time> until = {};  // stop after the last step at or before this time
  std::string only = {};           // step only the workflows matching this glob ("" = all)
  std::string timeline = {};       // write the timeline here ("-" = `out`, "" = nowhere)
  bool json = false;               // the summary as one JSON object
  std::size_t waiting_shown = 5;   // still-waiting slots shown per workflow (text summary)
};

// Runs a scenario; the summary goes to `out`, load errors and failed expectations (with the
// slot's history) to `err`. Returns true when every expectation held, false when one failed.
// A scenario that cannot be read or is wrong is ErrorCode::kInvalid naming the file and the
// line or field (exit 2 in `celos simulate`).
[[nodiscard]] Result<bool> simulate(const SimulateOptions& options, std::ostream& out,
                                    std::ostream& err);

struct PlanOptions {
  std::string from_dir = {}, to_dir = {};  // each holds workflows/ and defaults/
  Time now{};                              // the plan covers slots in [now, now + days)
  int days = 7;
  bool json = false;
};

// The files of one version, by name: workflows/NAME.js and defaults/NAME.js (celos-ci --plan
// reads them from the target and from the deployment directory).
struct WorkflowFiles {
  std::map<std::string, std::string> workflows, defaults;
};
[[nodiscard]] Result<bool> plan_files(const WorkflowFiles& from, const WorkflowFiles& to,
                                      const PlanOptions& options, std::ostream& out,
                                      std::ostream& err);

// Compares two versions; the plan goes to `out` (text, or JSON with keys "added", "removed",
// "moved", "changed"), load errors to `err`. Returns whether anything differs. A directory
// without workflows/ is kInvalid.
[[nodiscard]] Result<bool> plan(const PlanOptions& options, std::ostream& out, std::ostream& err);

}  // namespace celos
