// What a simulation tells at its end: the expectations (expect.cc) and the summary
// (summary.cc). Internal to sim/.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "celos/simulate.h"
#include "sim/world.h"

namespace celos::sim {

struct ExpectResult {
  const ExpectSpec* spec = nullptr;
  bool checked = false;  // false: its time was after --until
  bool passed = false;
  std::string message = {};               // what was expected and found
  std::optional<SlotId> history_of = {};  // the slot whose history explains a failure
};

// Checks each expectation once the simulation has passed its time.
class Expectations {
 public:
  explicit Expectations(World& world);
  // Checks the expectations whose time is before `now` (call before the step at `now`).
  void check_before(Time now);
  // Checks the rest as of `last` (the last step's time); those after `until` stay unchecked.
  void check_rest(Time last, std::optional<Time> until);
  const std::vector<ExpectResult>& results() const { return results_; }
  bool all_passed() const;

 private:
  void check(ExpectResult& r, Time as_of);
  void check_state(ExpectResult& r);
  void check_count(ExpectResult& r, Time as_of);
  void check_no_failure(ExpectResult& r, Time as_of);

  World& world_;
  std::vector<ExpectResult> results_;  // in the scenario's order
  std::vector<std::size_t> by_time_;   // indexes, by time
  std::size_t next_ = 0;
};

// The lines of `timeline_file` about one slot (its history as the timeline told it).
std::vector<std::string> slot_lines(const std::string& timeline_file, const SlotId& slot);

struct RunFacts {
  std::int64_t steps = 0;
  Time first{}, last{};            // the first and last step's `now`
  std::vector<std::string> notes;  // operator actions that failed, etc.
};

// Writes the summary (text or JSON) to `out`.
void write_summary(World& world, const RunFacts& facts, const Expectations& expectations,
                   const SimulateOptions& options, std::ostream& out);

}  // namespace celos::sim
