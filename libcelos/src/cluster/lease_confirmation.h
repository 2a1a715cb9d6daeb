// How the PostgreSQL cluster confirms its lease before a side effect (celos/lease_guard.h): one
// query proves that the lease row still names this node and its epoch and expires later than
// now() + margin, by the database's clock. The answer is reused for a short while (at most
// kReuse, and never beyond the proven expiry minus the margin, on this process's monotonic clock,
// which runs on through a SIGSTOP), so that a step of many workflows asks about once a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "celos/clock.h"
#include "celos/mutex.h"
#include "celos/state_db.h"
#include "celos/write_fence.h"
#include "io/pg.h"

namespace celos {

class LeaseConfirmation {
 public:
  static constexpr std::chrono::milliseconds kReuse{1000};

  // `fence` names the lease this node holds (cleared when it does not); `margin` is how long the
  // lease must still run at the database. Connections come from `pool`.
  LeaseConfirmation(pg::Pool& pool, std::shared_ptr<const WriteFence> fence,
                    std::chrono::milliseconds margin, Clock& clock = system_clock())
      : pool_(pool), fence_(std::move(fence)), margin_(margin), clock_(clock) {}

  // Thread-safe: concurrent callers wait for one query and share its answer.
  [[nodiscard]] Result<void> confirm();

 private:
  [[nodiscard]] Result<std::chrono::milliseconds> remaining(const WriteFence::Holder& holder);

  pg::Pool& pool_;
  std::shared_ptr<const WriteFence> fence_;
  std::chrono::milliseconds margin_;
  Clock& clock_;
  Mutex mutex_;  // also makes concurrent callers wait for one query
  std::int64_t trusted_epoch_ GUARDED_BY(mutex_) = 0;
  Clock::Monotonic trusted_until_ GUARDED_BY(mutex_){};
};

}  // namespace celos
