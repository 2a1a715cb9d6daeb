// A simulation scenario (docs/simulate.md): which workflows, over which time, and how the
// simulated world behaves (data, jobs, operators, outages), plus what must hold (expect).
// Plain values; load_scenario() reads and checks the JSON file.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "celos/error.h"
#include "celos/slot.h"
#include "celos/state_records.h"
#include "celos/time.h"

namespace celos::sim {

// Data that appears in the simulated file systems (or is announced) at given times.
struct DataSpec {
  std::string field;        // "data[2]", for messages
  std::string path;         // with time variables, or empty when `dataset` names the data
  std::string dataset;      // a dataset id: its instance path and done flag
  bool announce = false;    // dataset only: announced (as POST .../instances) instead of written
  std::vector<Time> times;  // the instances, ascending, deduplicated
  Seconds delay{0};         // an instance appears this long after its time
  std::map<Time, Seconds> late;  // instances whose delay differs
  std::set<Time> never;          // instances that never appear
};

// How the jobs of the workflows matching `workflow` (a glob) behave. The first matching entry
// decides.
struct JobSpec {
  std::string field = {};
  std::string workflow = "*";
  Seconds duration{0};                 // from start to end
  std::set<int> fail_on_attempt = {};  // the n-th submission of a slot fails (1 = the first)
  std::set<Time> fail_at = {};         // every attempt of these slots fails
  double failure_rate = 0;             // else each attempt fails with this probability
  std::uint64_t seed = 0;
};

enum class OperatorAction { kRerun, kKill, kPause, kResume, kMaintenance };

// What an operator does at `at` (as the API would, by "api:simulated-operator").
struct OperatorSpec {
  std::string field;
  Time at{};
  OperatorAction action = OperatorAction::kRerun;
  std::string workflow;
  Time slot{};  // rerun, kill
  MaintenanceMode mode = MaintenanceMode::kOff;
  std::string reason;
};

// An external service (by kind or endpoint glob) or a file system (by URI glob) that cannot be
// reached in [from, to).
struct OutageSpec {
  std::string field = {};
  std::string service = {};      // glob over kind() and endpoint(); empty: not a service outage
  std::string file_system = {};  // glob over the file system URI; empty: no file system outage
  Time from{}, to{};
};

enum class ExpectKind { kState, kCount, kNoFailure };
enum class Compare { kEqual, kAtLeast, kAtMost };

struct ExpectSpec {
  std::string field;
  ExpectKind kind = ExpectKind::kState;
  std::string workflow;    // kState: the id; kCount, kNoFailure: a glob
  Time slot{};             // kState
  std::optional<Time> at;  // checked after the last step at or before it (default: the end)
  SlotStatus state = SlotStatus::kSuccess;  // kState, kCount
  Compare compare = Compare::kEqual;        // kCount
  std::int64_t count = 0;                   // kCount
  std::optional<Time> from, to;             // kCount: slot times in [from, to)
};

struct Scenario {
  std::string file;                               // as given, for messages
  std::string workflows_dir, defaults_dir;        // resolved against the file's directory
  std::map<std::string, std::string> substitute;  // text replaced in the copied JS files
  Time start{}, end{};
  Seconds step{60};
  std::vector<DataSpec> data;
  std::vector<JobSpec> jobs;
  std::vector<OperatorSpec> operators;
  std::vector<OutageSpec> outages;
  std::vector<ExpectSpec> expect;
};

// Reads a scenario. A file that cannot be read, is not JSON (the message names the line and
// column) or says something wrong (the message names the field: `jobs[1].duration`) is
// ErrorCode::kInvalid, the message starting with the file's name.
[[nodiscard]] Result<Scenario> load_scenario(const std::string& path);
// The same from text (`file` names it in messages; relative directories resolve against
// `base_dir`).
[[nodiscard]] Result<Scenario> parse_scenario(const std::string& text, const std::string& file,
                                              const std::string& base_dir);

// "90" (seconds), "90s", "10m", "2h", "1d", "1h30m". kInvalid otherwise.
[[nodiscard]] Result<Seconds> parse_duration(const std::string& text);

// fnmatch(3)-style glob over a whole name (`*`, `?`, `[...]`).
bool glob_match(const std::string& pattern, const std::string& name);

}  // namespace celos::sim
