// Slots and the slot state machine (SPEC §4, reference/images/states.png).
//
// A slot is one scheduled time of one workflow. Its state is a small value; the transition
// functions return the new state or, for an illegal transition, an Error with
// ErrorCode::kInvalid (the HTTP layer answers 400 and nothing changes).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "celos/error.h"
#include "celos/time.h"

namespace celos {

enum class SlotStatus { kWaiting, kReady, kRunning, kSuccess, kFailure, kWaitTimeout, kKilled };

// "WAITING", "READY", ... as stored in the state database.
std::string_view to_string(SlotStatus s);
[[nodiscard]] Result<SlotStatus> parse_slot_status(std::string_view text);

// SUCCESS, FAILURE, WAIT_TIMEOUT and KILLED: the step leaves them alone.
bool is_final(SlotStatus s);

// The states of a slot's deadline (celos/deadline.h).
enum class DeadlineState { kPending, kAtRisk, kMet, kMissed };
// "PENDING", "AT_RISK", "MET", "MISSED".
std::string_view to_string(DeadlineState s);
[[nodiscard]] Result<DeadlineState> parse_deadline_state(std::string_view text);

struct SlotId {
  std::string workflow;
  Time time;  // whole seconds

  friend bool operator==(const SlotId&, const SlotId&) = default;
  friend auto operator<=>(const SlotId&, const SlotId&) = default;
};

// `wordcount@2015-09-13T13:00:00.000Z`, for log lines and error messages.
std::string to_string(const SlotId& id);

// A new run id for an attempt recorded RUNNING at `now`: a UUID of version 7 (its first 48 bits
// are `now` in milliseconds, the rest random), so ids sort by start.
std::string new_run_id(Time now);

struct SlotState {
  SlotId id;
  SlotStatus status = SlotStatus::kWaiting;
  std::optional<std::string> external_id;
  int retry_count = 0;
  // Optional keys of the stored record (SPEC §16), absent in older records:
  // why the last attempt failed or could not be submitted ("message"),
  std::optional<std::string> message;
  // the earliest time a retry may run (retry back-off, "retryAt"),
  std::optional<Time> retry_at;
  // the dataset instances a mode-"new" input handed to this slot, by dataset id ("consumed").
  std::map<std::string, std::vector<Time>> consumed;
  // the backfill plan that owns this slot ("backfill", celos/backfill.h): only that plan's lane
  // submits it, while the plan runs. A rerun by hand clears it (the slot is live again).
  std::optional<std::string> backfill;
  // the slot's deadline, fixed when it was first stored ("deadline"; celos/deadline.h),
  std::optional<Time> deadline;
  // the highest deadline state it reached and was notified of: AT_RISK or MISSED
  // ("deadlineState").
  std::optional<DeadlineState> deadline_state;
  // the OpenLineage run id of the running attempt ("runId", a UUID; celos/lineage.h): set when
  // the attempt is recorded RUNNING, gone when it ends (its final event names it).
  std::optional<std::string> run_id;

  friend bool operator==(const SlotState&, const SlotState&) = default;

  // The state of a slot that has nothing stored: WAITING, retry 0, no external id.
  static SlotState waiting(SlotId id);
  // A state with the four keys of SPEC §5 (tests, imports).
  static SlotState of(SlotId id, SlotStatus status, std::optional<std::string> external_id = {},
                      int retry_count = 0);

  // WAITING -> READY.
  [[nodiscard]] Result<SlotState> ready() const;
  // WAITING -> WAIT_TIMEOUT.
  [[nodiscard]] Result<SlotState> wait_timeout() const;
  // READY -> RUNNING with the external id the service gave.
  [[nodiscard]] Result<SlotState> running(std::string job) const;
  // RUNNING -> SUCCESS.
  [[nodiscard]] Result<SlotState> success() const;
  // RUNNING (or READY: a refused submission) -> WAITING with retry_count + 1 (the caller
  // checks maxRetryCount).
  [[nodiscard]] Result<SlotState> retry() const;
  // RUNNING (or READY: a refused submission) -> FAILURE.
  [[nodiscard]] Result<SlotState> failure() const;
  // SUCCESS, FAILURE, WAIT_TIMEOUT, KILLED -> WAITING, retry 0, external id cleared.
  [[nodiscard]] Result<SlotState> rerun() const;
  // WAITING, READY, RUNNING -> KILLED (the external id is kept).
  [[nodiscard]] Result<SlotState> killed() const;
};

}  // namespace celos
