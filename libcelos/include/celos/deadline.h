// Deadlines (issue 27, docs/deadlines.md): when a slot must be SUCCESS, and a warning before it
// is missed.
//
//   deadline: {after: "PT3H"}                                  slot time + an ISO 8601 duration
//   deadline: {at: "06:00", timeZone: "UTC", dayOffset: 1}     that local time on the slot's
//                                                              local date + dayOffset days
//   onMiss: ["notify"] (default) or ["notify", "kill"]
//
// A slot's deadline is fixed when the slot is first stored (SlotState::deadline, "deadline" in
// the record): reloads and edits of the workflow never move the deadline of a stored slot. Its
// state is PENDING (not final, not at risk), AT_RISK (not final, predicted to finish after the
// deadline), MET (SUCCESS at or before it) or MISSED (not SUCCESS at it; stays MISSED). The
// highest state reached is stored with the slot ("deadlineState": AT_RISK or MISSED), in the
// same write as the change that reached it, so that a transition is notified once and a crash
// never notifies it twice. All times UTC.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "celos/error.h"
#include "celos/slot.h"
#include "celos/time.h"

namespace celos {

struct Workflow;

// A workflow's deadline rule (defineWorkflow's `deadline` and `onMiss`).
struct DeadlineRule {
  // {after}: the slot time plus `after` (>= 0).
  std::optional<std::chrono::seconds> after;
  // {at, timeZone, dayOffset}: `at` (seconds after local midnight) on the slot's local date in
  // `time_zone`, plus `day_offset` days.
  std::chrono::seconds at{0};
  std::string time_zone = "UTC";
  int day_offset = 0;
  // onMiss: "kill" too (a missed slot that is not final is killed); "notify" is always on.
  bool kill_on_miss = false;

  friend bool operator==(const DeadlineRule&, const DeadlineRule&) = default;
};

// An ISO 8601 duration of days, hours, minutes and seconds: `PT3H`, `PT90M`, `P1DT2H30M`,
// `PT45S`, `P2D` (weeks, months and years are refused: their length varies). A sign, fractions
// or an empty duration are kInvalid errors quoting the text.
[[nodiscard]] Result<std::chrono::seconds> parse_iso_duration(std::string_view text);

// `HH:MM` or `HH:MM:SS` (00:00 to 23:59:59) as seconds after midnight; kInvalid otherwise.
[[nodiscard]] Result<std::chrono::seconds> parse_time_of_day(std::string_view text);

// Checks a rule's time zone (kInvalid naming it when unknown).
[[nodiscard]] Result<void> validate_deadline_rule(const DeadlineRule& rule);

// The deadline of slot `slot` under `rule`; kInvalid when the rule's zone is unknown.
[[nodiscard]] Result<Time> deadline_of(const DeadlineRule& rule, Time slot);

// The deadline a slot has: its stored one, else what the workflow's rule gives it now (a slot
// not stored yet); nothing when neither.
std::optional<Time> effective_deadline(const Workflow& workflow, const SlotState& slot);

// What the history predicts for a slot that is not final.
struct DeadlineForecast {
  std::optional<Time> finish;  // the predicted SUCCESS (90th percentiles); nothing: no history
  std::string reason;          // why ("input late: …", "usually runs 40 min (p90)")
};

// Predicts when a slot will finish (celos/deadline_predictor.h has the history's). Thread-safe.
class DeadlinePredictor {
 public:
  virtual ~DeadlinePredictor() = default;
  virtual DeadlineForecast predict(const Workflow& workflow, const SlotState& slot,
                                   Time now) const = 0;
};

// The state of a slot with deadline `deadline` seen at `now`: MISSED when stored so (or the
// slot ended in FAILURE or WAIT_TIMEOUT, or is not SUCCESS at the deadline); MET for SUCCESS;
// AT_RISK when `forecast` finishes after the deadline; PENDING otherwise. A KILLED slot that
// did not miss is nothing: it has no deadline to meet any more.
std::optional<DeadlineState> deadline_state_at(const SlotState& slot, Time deadline, Time now,
                                               const DeadlineForecast& forecast);

// One slot's deadline as the API shows it (/trigger-status, /api/v1/deadlines).
struct DeadlineView {
  SlotId slot;
  Time deadline{};
  DeadlineState state = DeadlineState::kPending;
  std::optional<Time> predicted_finish;
  std::string reason;
};

}  // namespace celos
