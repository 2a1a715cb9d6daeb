#include "cluster/lease_confirmation.h"

#include <algorithm>

#include <fmt/format.h>

#include "celos/write_fence.h"

namespace celos {

// The lease's remaining time at the database, when it still names `holder` and runs beyond the
// margin; kUnavailable otherwise.
Result<std::chrono::milliseconds> LeaseConfirmation::remaining(const WriteFence::Holder& holder) {
  auto lost = [&](const std::string& why) {
    return fail(fmt::format("node {} cannot confirm the lease of cluster {} (epoch {}): {}",
                            holder.node_id, holder.cluster, holder.epoch, why),
                ErrorCode::kUnavailable);
  };
  auto conn = pool_.take();
  if (!conn) return lost(conn.error().message);
  pg::PooledConn c(pool_, std::move(*conn));
  auto r = pg::exec(c.get(),
                    "SELECT (extract(epoch FROM expires - now()) * 1000)::bigint FROM celos_lease "
                    "WHERE cluster = $1 AND holder = $2 AND epoch = $3 "
                    "AND expires > now() + $4 * interval '1 millisecond'",
                    {holder.cluster, holder.node_id, std::to_string(holder.epoch),
                     std::to_string(margin_.count())});
  if (!r) return lost(r.error().message);
  if (PQntuples(r->get()) != 1) {
    return lost(fmt::format("another node holds it, or it expires within {} ms", margin_.count()));
  }
  return std::chrono::milliseconds(std::stoll(pg::field(r->get(), 0, 0).value_or("0")));
}

Result<void> LeaseConfirmation::confirm() {
  const auto holder = fence_->get();
  if (!holder) return fail("this node does not hold the cluster's lease", ErrorCode::kUnavailable);
  MutexLock lock(mutex_);
  const auto sent = clock_.monotonic();
  if (trusted_epoch_ == holder->epoch && sent < trusted_until_) return {};
  auto left = remaining(*holder);
  if (!left) {
    trusted_until_ = {};
    return tl::unexpected(left.error());
  }
  trusted_epoch_ = holder->epoch;
  trusted_until_ = sent + std::min<std::chrono::milliseconds>(kReuse, *left - margin_);
  return {};
}

}  // namespace celos
