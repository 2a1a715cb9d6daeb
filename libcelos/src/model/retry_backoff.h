// Retry back-off (SPEC §13, §16): after the k-th failure a slot stays WAITING until
// failure time + min(retryDelaySeconds × retryBackoffFactor^(k−1), maxRetryDelaySeconds), where
// the failure time is the `now` of the step that saw the job fail. The wait is stored with the
// slot as "retryAt"; until then the slot neither becomes READY nor times out. A rerun clears it
// (SlotState::rerun). These are the hooks the step calls (scheduler.cc).
#pragma once

#include <chrono>

#include "celos/slot.h"
#include "celos/trigger.h"
#include "celos/workflow.h"

namespace celos {

// The wait after the k-th failure (k >= 1); zero when the workflow has no retryDelaySeconds.
std::chrono::milliseconds retry_delay(const Workflow& workflow, int k);

// A RUNNING slot whose job failed at `now` and may be retried: RUNNING -> WAITING with
// retry_count + 1 and, when the workflow has a delay, retry_at = now + retry_delay.
[[nodiscard]] Result<SlotState> retry_with_backoff(const SlotState& slot, const Workflow& workflow,
                                                   Time now);

// True while a WAITING slot waits for its retry time.
bool retry_pending(const SlotState& slot, Time now);

// /trigger-status of a slot that waits for its retry: {"type": "RetryBackoff", "ready": false,
// "description": "Retry k not before T", "subStatuses": [tree]}; otherwise `tree` unchanged.
TriggerStatus with_retry_backoff(const SlotState& slot, TriggerStatus tree, Time now);

}  // namespace celos
