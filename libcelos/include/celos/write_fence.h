// The write fence of a cluster node (SPEC §11): the lease every write of a fenced PostgreSQL
// database checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "celos/mutex.h"

namespace celos {

// The lease a write of a cluster node must still hold (SPEC §11): every write of a fenced
// PostgreSQL database checks, in its own transaction, that `node_id` holds the lease of
// `cluster` with `epoch` and that the lease has not expired by the database's clock. Shared
// between the cluster component (which sets and clears it) and the database (which reads it);
// thread-safe.
class WriteFence {
 public:
  struct Holder {
    std::string cluster;
    std::string node_id;
    std::int64_t epoch = 0;
  };
  void set(std::optional<Holder> holder) {
    MutexLock lock(mutex_);
    holder_ = std::move(holder);
  }
  std::optional<Holder> get() const {
    MutexLock lock(mutex_);
    return holder_;
  }

 private:
  mutable Mutex mutex_;
  std::optional<Holder> holder_ GUARDED_BY(mutex_);
};

}  // namespace celos
