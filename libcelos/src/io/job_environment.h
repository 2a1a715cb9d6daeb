// The variables every job celos runs gets (SPEC §7.2), shared by the executors that run commands
// (local commands, Slurm, Kubernetes).
#pragma once

#include <map>
#include <string>

#include "celos/slot.h"

namespace celos {

// CELOS_WORKFLOW_ID, CELOS_SLOT_TIME (`2015-09-13T13:00:00.000Z`) and CELOS_YEAR … CELOS_SECOND
// (zero-padded like the time variables) of `slot`, then `extra` (the workflow's `env`, which
// wins) with its time variables replaced by the slot's.
std::map<std::string, std::string> job_environment(const SlotId& slot,
                                                   const std::map<std::string, std::string>& extra);

}  // namespace celos
