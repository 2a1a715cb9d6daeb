#include "celos/lease_guard.h"

namespace celos {

LeaseGuard& always_current_lease_guard() {
  struct Always final : LeaseGuard {
    Result<void> confirm() override { return {}; }
  };
  static Always guard;
  return guard;
}

}  // namespace celos
