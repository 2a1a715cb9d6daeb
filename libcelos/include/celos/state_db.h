// The state database (SPEC §5).
//
//   <db>/state/<workflow>/<yyyy-mm-dd>/<HH:MM:SS.sssZ>
//   {"time":..,"status":..,"externalID":..,"retryCount":N}
//   <db>/rerun/<workflow>/<yyyy-mm-dd>/<HH:MM:SS.sssZ>  {"rerunTime":"<when the rerun was asked>"}
//   <db>/paused/<workflow>                              exists = paused
//
// The directory of the original Celos is readable as is. Writes are atomic and durable (see
// FileSystem::write_files). A file that cannot be parsed is an ErrorCode::kCorrupt error that
// names its path; it affects only its workflow, and is never overwritten silently.
// Safe for one writer and any number of concurrent readers.
//
// Beside it: celos/state_records.h (maintenance, slot history entries), celos/state_codecs.h
// (their JSON), celos/write_fence.h (the cluster's write fence), celos/state_db_open.h (opening
// a database by URI, the file database, --import-db).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "celos/error.h"
#include "celos/slot.h"
#include "celos/state_records.h"
#include "celos/time.h"

namespace celos {

class StateDatabase {
 public:
  virtual ~StateDatabase() = default;
  // The stored state of one slot, or nothing.
  [[nodiscard]] virtual Result<std::optional<SlotState>> get_slot(const SlotId& id) = 0;
  // The stored states of a workflow's slots with start <= time < end, ascending by time.
  [[nodiscard]] virtual Result<std::vector<SlotState>> get_slots(std::string_view workflow,
                                                                 Time start, Time end) = 0;
  // Stores states (any workflows), durable as a group.
  [[nodiscard]] virtual Result<void> put_slots(const std::vector<SlotState>& states) = 0;
  // put_slots, with `before_visible` run before any of the states can be read back, by this
  // process or after a crash: what must be durable no later than they are (the OpenLineage
  // events a change emits, celos/lineage.h). Its error stops the write, nothing stored. The
  // default runs it first; the file backend runs it once the new files' contents are synced, so
  // that a sync of the same disk it asks for costs next to nothing.
  [[nodiscard]] virtual Result<void> put_slots_after(
      const std::vector<SlotState>& states, const std::function<Result<void>()>& before_visible) {
    if (auto first = before_visible(); !first) return first;
    return put_slots(states);
  }
  // Writes a rerun marker for a slot, stamped `now`.
  [[nodiscard]] virtual Result<void> mark_rerun(const SlotId& id, Time now) = 0;
  // The slot times of a workflow that carry a rerun marker younger than kRerunMarkerLifetime
  // at `now`; expired markers are removed.
  [[nodiscard]] virtual Result<std::vector<Time>> rerun_times(std::string_view workflow,
                                                              Time now) = 0;
  [[nodiscard]] virtual Result<bool> is_paused(std::string_view workflow) = 0;
  [[nodiscard]] virtual Result<void> set_paused(std::string_view workflow, bool paused) = 0;
  // The maintenance mode (SPEC §13); mode off with no reason and no since when never set.
  // File backend: <db>/maintenance, a JSON object written atomically.
  [[nodiscard]] virtual Result<Maintenance> maintenance() = 0;
  [[nodiscard]] virtual Result<void> set_maintenance(const Maintenance& maintenance) = 0;
  // Slot history (SPEC §13): appends changes (any slots, any workflows) to their slots' history,
  // durable as a group. Cheap enough to be called once per step with all its changes.
  [[nodiscard]] virtual Result<void> append_history(
      const std::vector<SlotHistoryEntry>& entries) = 0;
  // The recorded changes of one slot, oldest first (in the order they were appended); empty
  // when it never changed.
  [[nodiscard]] virtual Result<std::vector<SlotHistoryEntry>> slot_history(const SlotId& id) = 0;
  // Slot history retention: deletes the recorded changes of the slots whose time and every
  // change (SlotHistoryEntry::at) are before `before`; returns how many changes went. The file
  // backend removes a day file (<db>/history/<workflow>/<day>.jsonl) as a whole, once its day and
  // all its lines are before `before` (a day with a recent change keeps all its slots). Reads
  // the whole history: never in the request path (celos-server: the leader, at most once an
  // hour). Thread-safe with append_history. The default keeps everything.
  [[nodiscard]] virtual Result<std::size_t> prune_history(Time before) {
    (void)before;
    return std::size_t{0};
  }
  // Writes rerun markers for many slots, stamped `now`, durable as a group (range reruns).
  // The default writes them one by one.
  [[nodiscard]] virtual Result<void> mark_reruns(const std::vector<SlotId>& ids, Time now) {
    for (const SlotId& id : ids) {
      if (auto marked = mark_rerun(id, now); !marked) return marked;
    }
    return {};
  }

  // A workflow's window as a step reads it: the stored states with start <= time < end that
  // are not final, whole, and only the time and status of the final ones (a week of SUCCESS
  // slots need not be copied each step), both ascending by time. The default asks get_slots.
  struct Window {
    std::vector<SlotState> open;
    std::vector<std::pair<Time, SlotStatus>> closed;
  };
  [[nodiscard]] virtual Result<Window> get_window(std::string_view workflow, Time start, Time end);

  // Datasets (SPEC §14). Records that instance `time` of `dataset` is present (an external
  // producer announced it), stamped `now`. Idempotent: announcing again changes nothing.
  // File backend: a line {"time":"<time>","announced":"<now>"} of
  // <db>/datasets/<dataset>/<yyyy-mm-dd>.jsonl (io/file_db/file_announcements.h).
  // A backend without announcements (the default) refuses them and lists none.
  [[nodiscard]] virtual Result<void> announce_instance(std::string_view dataset, Time time,
                                                       Time now);
  // Several announcements made durable together (a burst of them costs one write, issue 28):
  // the file backend appends them with one sync, PostgreSQL in one transaction. Each is
  // idempotent as announce_instance is. On an error some of them may be stored. The default
  // calls announce_instance for each, stopping at the first error.
  struct Announcement {
    std::string dataset;
    Time time;
  };
  [[nodiscard]] virtual Result<void> announce_instances(
      const std::vector<Announcement>& announcements, Time now);
  // The announced instances of `dataset` with start <= time < end, ascending.
  [[nodiscard]] virtual Result<std::vector<Time>> announced_instances(std::string_view dataset,
                                                                      Time start, Time end);
  // A hint before a step (SPEC §4): the step is about to read the slots of `workflows` from
  // `start` on, their rerun markers and their pause flags. A backend may load them in bulk and
  // keep them: PostgreSQL's leader keeps them in memory (one query per step instead of three
  // per workflow), valid because only the fenced leader of one epoch writes. Reads answer
  // exactly what they would answer without the hint. The default (file backend: its day
  // directories are cached already) does nothing. An error is only logged by the step: the
  // reads that follow ask the database again.
  [[nodiscard]] virtual Result<void> prefetch(const std::vector<std::string>& workflows,
                                              Time start) {
    (void)workflows;
    (void)start;
    return {};
  }
  // Backfill plans (issue 29; celos/backfill.h): each plan is one JSON record under its id,
  // written whole and atomically (file backend: <db>/backfills/<id>; PostgreSQL: a row of
  // celos_backfills, fenced as every write). The default keeps none and refuses to store one.
  [[nodiscard]] virtual Result<std::vector<std::string>> backfill_records() {
    return std::vector<std::string>{};
  }
  [[nodiscard]] virtual Result<void> put_backfill_record(const std::string& id,
                                                         const std::string& record) {
    (void)id;
    (void)record;
    return fail("this state database keeps no backfill plans", ErrorCode::kInvalid);
  }
  // Whether the backend can be used right now (/health/ready): a PostgreSQL database that cannot
  // be reached answers an error naming its host, port and database. The file backend: always ok.
  [[nodiscard]] virtual Result<void> check() { return {}; }
};

}  // namespace celos
