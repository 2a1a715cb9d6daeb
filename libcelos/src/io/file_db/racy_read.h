// git's "racy" rule for the file state database's caches of directories (state days, rerun
// marker days): a directory read less than a second after its last change may have been
// changed again within the file system's timestamp granularity, so that read is not reused.
#pragma once

#include <chrono>
#include <cstdint>

#include "celos/clock.h"

namespace celos {

// Whether a read of a directory whose mtime is `mtime_ns` is racy. Small values are version
// counters (the in-memory test file system), not wall times: never racy. The comparison is with
// the real clock that stamped the mtime (system_clock()), never an injected one: a manual
// clock's time says nothing about the disk's.
inline bool racy_read(std::int64_t mtime_ns) {
  constexpr std::int64_t kRacyNanos = 1'000'000'000;
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(system_clock().now().time_since_epoch())
          .count();
  return mtime_ns > 1'000'000'000'000'000'000 && now - mtime_ns < kRacyNanos;
}

}  // namespace celos
