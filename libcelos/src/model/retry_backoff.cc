#include "model/retry_backoff.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace celos {

std::chrono::milliseconds retry_delay(const Workflow& workflow, int k) {
  if (workflow.retry_delay_seconds <= 0 || k < 1) return std::chrono::milliseconds(0);
  // In doubles: factor^(k-1) overflows integers long before the cap applies.
  const double seconds = static_cast<double>(workflow.retry_delay_seconds) *
                         std::pow(workflow.retry_backoff_factor, static_cast<double>(k - 1));
  const double capped = std::min(seconds, static_cast<double>(workflow.max_retry_delay_seconds));
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(capped * 1000)));
}

Result<SlotState> retry_with_backoff(const SlotState& slot, const Workflow& workflow, Time now) {
  auto next = slot.retry();
  if (!next) return next;
  const auto delay = retry_delay(workflow, next->retry_count);
  if (delay.count() > 0) next->retry_at = now + delay;
  return next;
}

bool retry_pending(const SlotState& slot, Time now) {
  return slot.status == SlotStatus::kWaiting && slot.retry_at && now < *slot.retry_at;
}

TriggerStatus with_retry_backoff(const SlotState& slot, TriggerStatus tree, Time now) {
  if (!retry_pending(slot, now)) return tree;
  TriggerStatus wrapped;
  wrapped.type = "RetryBackoff";
  wrapped.ready = false;
  wrapped.description =
      fmt::format("Retry {} not before {}", slot.retry_count, format_time(*slot.retry_at));
  wrapped.sub_statuses.push_back(std::move(tree));
  return wrapped;
}

}  // namespace celos
