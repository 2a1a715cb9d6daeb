// Scheduling strategies: which READY slots to run now (SPEC §4 step 3).
#pragma once

#include <memory>
#include <vector>

#include "celos/slot.h"

namespace celos {

class SchedulingStrategy {
 public:
  virtual ~SchedulingStrategy() = default;
  // Picks, from the slots of one workflow in this step, the READY ones to submit now.
  // The result is a subset of `slots` in the order they should be submitted.
  virtual std::vector<SlotState> pick(const std::vector<SlotState>& slots) const = 0;
  virtual std::string describe() const = 0;
};

// The oldest READY slots while fewer than `concurrency` slots of the list are RUNNING.
// concurrency >= 1.
std::shared_ptr<const SchedulingStrategy> make_serial_strategy(int concurrency);

}  // namespace celos
