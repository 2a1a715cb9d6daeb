// The fence of side effects outside the state database (SPEC §11). Writes of the state database
// are fenced by the lease's epoch in their own transaction (celos::WriteFence); a file removed,
// a done flag written or a job started is not. So the step asks a LeaseGuard right before each
// such effect: a leader that was frozen (SIGSTOP, a paused VM) and lost its lease meanwhile
// learns it there and stops, instead of removing the output a new leader's job is writing.
//
// A confirmation cannot be atomic with a file system's effect: it proves that the lease is held
// with time to spare (a margin), so an effect that follows within the margin is still the
// leader's. Implemented by the clusters (celos/cluster.h); the model sees only this interface.
#pragma once

#include "celos/error.h"

namespace celos {

class LeaseGuard {
 public:
  virtual ~LeaseGuard() = default;
  // Ok while this node holds the lease it steps under with time to spare. An error (kUnavailable
  // when the lease is lost or cannot be confirmed) names why; the caller then does nothing more.
  // Thread-safe; cheap enough to be asked before each workflow's effects.
  [[nodiscard]] virtual Result<void> confirm() = 0;
};

// A guard that is always current: a single server with the file backend, which holds its
// directory's lock for its whole life. Static; thread-safe.
LeaseGuard& always_current_lease_guard();

}  // namespace celos
