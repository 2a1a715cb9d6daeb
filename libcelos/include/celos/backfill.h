// Backfills as plans (issue 29): "rerun every slot of these workflows in [start, end)" as one
// persisted plan that feeds its slots to the scheduler a few at a time, in its own lane.
//
// A plan is created (Backfills::create) with its slots counted, but nothing is written to them
// then. Each step (Scheduler::step, before the step proper) every running plan first counts the
// slots it had admitted that have ended, then admits the next ones in its `order` until
// `max_running` of its slots are in flight: an admitted slot gets a rerun marker (so the step
// sees it outside the 7-day window) and a slot record carrying `"backfill": "<plan id>"`
// (SlotState::backfill), WAITING with retry 0 (a final slot is rerun; a READY one stays READY).
// The plan record (with its cursors and in-flight list) is written after the slots: a crash in
// between is found again by the next step (a slot carrying the plan's id is already admitted),
// so no slot is admitted twice. The step submits a slot that carries a plan id only while that
// plan runs, and only with the capacity the live slots left (celos/strategy.h).
//
// Pause: no admission, nothing of the plan is submitted (its RUNNING slots finish). Cancel:
// as pause, for good, and its admitted slots that had not started become KILLED (message
// "backfill <id> cancelled"). Done: every slot admitted and ended. Records live in the state
// database (StateDatabase::backfill_records). Must run serialized with steps and mutations.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "celos/error.h"
#include "celos/slot.h"
#include "celos/state_db.h"
#include "celos/time.h"
#include "celos/workflow.h"

namespace celos {

inline constexpr std::size_t kDefaultMaxBackfillSlots = 1'000'000;
inline constexpr int kDefaultBackfillMaxRunning = 10;

// Which slots of the range a plan runs: missing = never ran (nothing stored, WAITING, READY),
// failed = FAILURE, WAIT_TIMEOUT, KILLED, all = every slot but RUNNING ones.
enum class Reprocess { kMissing, kFailed, kAll };
enum class BackfillOrder { kOldest, kNewest };
enum class BackfillState { kRunning, kPaused, kCancelled, kDone };

std::string_view to_string(Reprocess r);
std::string_view to_string(BackfillOrder o);
std::string_view to_string(BackfillState s);
// kInvalid naming the parameter and the value.
[[nodiscard]] Result<Reprocess> parse_reprocess(std::string_view text);
[[nodiscard]] Result<BackfillOrder> parse_backfill_order(std::string_view text);

// Whether a slot in `state` (nothing: nothing stored) is one `reprocess` runs.
bool reprocess_matches(Reprocess reprocess, const std::optional<SlotState>& state);

struct BackfillRequest {
  std::string workflows;  // comma-separated ids and globs with `*`
  Time start{};
  Time end{};
  Reprocess reprocess = Reprocess::kMissing;
  BackfillOrder order = BackfillOrder::kOldest;
  int max_running = kDefaultBackfillMaxRunning;
  bool dry_run = false;
  Time now{};
  std::string by = "api";
  std::size_t max_slots = kDefaultMaxBackfillSlots;
};

struct BackfillPlan {
  std::string id;
  BackfillState state = BackfillState::kRunning;
  std::vector<std::string> workflows;  // resolved ids, sorted
  Time start{};
  Time end{};  // the request's end, never after the creation time
  Reprocess reprocess = Reprocess::kMissing;
  BackfillOrder order = BackfillOrder::kOldest;
  int max_running = kDefaultBackfillMaxRunning;
  Time created{};
  std::string by;
  std::optional<Time> finished;  // when it became done or cancelled
  std::size_t total = 0;         // slots counted at creation
  // Admission: per workflow, oldest: every slot before the cursor was looked at; newest: every
  // slot at or after it. A workflow without a cursor was not started.
  std::map<std::string, Time> cursors;
  std::vector<SlotId> in_flight;            // admitted, not ended yet
  std::map<SlotStatus, std::size_t> ended;  // admitted slots that ended, by final status
  std::size_t skipped = 0;  // looked at, no longer matching `reprocess` (ran meanwhile)

  std::size_t ended_count() const;
};

// The plan record as stored (JSON) and back; kCorrupt on bad content.
std::string backfill_to_json(const BackfillPlan& plan);
[[nodiscard]] Result<BackfillPlan> backfill_from_json(std::string_view text);

// What POST /api/v1/backfills answers.
struct BackfillCreated {
  std::optional<std::string> id;  // nothing for a dry run
  bool dry_run = false;
  std::size_t slots = 0;
  std::map<std::string, std::size_t> workflows;  // every matched workflow, 0 included
};

// A plan as GET shows it: its slots by status (the ended ones, the in-flight ones as they are
// now, "PENDING" for the ones not admitted yet), the rate of ended slots per hour since it was
// created, and when it should end at that rate (nothing unless running and rate > 0).
struct BackfillProgress {
  BackfillPlan plan;
  std::map<std::string, std::size_t> slots;  // "total", "PENDING", "<STATUS>"
  double rate_per_hour = 0;
  std::optional<Time> eta;
};

enum class BackfillAction { kPause, kResume, kCancel };

class Backfills {
 public:
  // Neither is owned; both must outlive this.
  Backfills(const WorkflowConfig& config, StateDatabase& db) : config_(config), db_(db) {}

  // Validates (kInvalid naming the parameter), counts, and (unless a dry run) stores the plan.
  [[nodiscard]] Result<BackfillCreated> create(const BackfillRequest& request);
  [[nodiscard]] Result<std::vector<BackfillPlan>> list();
  // kNotFound for an unknown id.
  [[nodiscard]] Result<BackfillPlan> get(const std::string& id);
  [[nodiscard]] Result<BackfillProgress> progress(const BackfillPlan& plan, Time now);
  // Pause, resume or cancel. kNotFound for an unknown id. A done or cancelled plan changes
  // nothing and says why in `conflict` (HTTP 409). Cancel returns, in `killed`, the slots it
  // moved to KILLED (already written), with what they were before.
  struct Acted {
    BackfillPlan plan;
    std::optional<std::string> conflict;
    std::vector<std::pair<SlotState, SlotState>> killed;
  };
  [[nodiscard]] Result<Acted> act(const std::string& id, BackfillAction action, Time now);

 private:
  const WorkflowConfig& config_;
  StateDatabase& db_;
};

// One step's admission (model/backfill_pump.cc): for every running plan, counts its ended slots
// and admits the next ones. Writes the admitted slots (markers and states) and then the plans.
// Errors are per plan (in `errors`); the ids of the running plans are returned for the step's
// lane. `admitted`: the states written (for the listeners), with what they were before.
// `plans`: every plan after the admission (for /metrics).
struct BackfillPump {
  std::set<std::string> running;
  std::vector<std::pair<std::optional<SlotState>, SlotState>> admitted;
  std::vector<std::string> errors;
  std::vector<BackfillPlan> plans = {};
};
BackfillPump pump_backfills(const WorkflowConfig& config, StateDatabase& db, Time now);

}  // namespace celos
