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
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "celos/error.h"
#include "celos/file_system.h"
#include "celos/mutex.h"
#include "celos/slot.h"
#include "celos/time.h"

namespace celos {

// Maintenance modes (SPEC §13): drain = nothing new is submitted, pause = steps do nothing.
enum class MaintenanceMode { kOff, kDrain, kPause };
std::string_view to_string(MaintenanceMode mode);
// "off", "drain", "pause"; kInvalid naming the value otherwise.
[[nodiscard]] Result<MaintenanceMode> parse_maintenance_mode(std::string_view text);

struct Maintenance {
  MaintenanceMode mode = MaintenanceMode::kOff;
  std::optional<std::string> reason;
  std::optional<Time> since;  // when the mode was entered
};
// {"mode","reason","since"} as stored; kCorrupt on bad content.
std::string maintenance_to_json(const Maintenance& maintenance);
[[nodiscard]] Result<Maintenance> maintenance_from_json(std::string_view json);

// How long a rerun marker keeps a slot in the step's view.
inline constexpr std::chrono::hours kRerunMarkerLifetime{24 * 14};

// One recorded change of a slot's state (slot history, SPEC §13/§16).
struct SlotHistoryEntry {
  Time at{};                       // the step's `now`, or the time of the API request
  std::optional<SlotStatus> from;  // nothing when no state was stored before
  SlotState to;                    // the new state (its id names the slot)
  std::string by;                  // "step", or "api:<token name or anonymous>@<client>"

  friend bool operator==(const SlotHistoryEntry&, const SlotHistoryEntry&) = default;
};

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
  // File backend: <db>/datasets/<dataset>/<yyyy-mm-dd>/<HH:MM:SS.sssZ> {"announced": "<now>"}.
  // A backend without announcements (the default) refuses them and lists none.
  [[nodiscard]] virtual Result<void> announce_instance(std::string_view dataset, Time time,
                                                       Time now);
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
  // Whether the backend can be used right now (/health/ready): a PostgreSQL database that cannot
  // be reached answers an error naming its host, port and database. The file backend: always ok.
  [[nodiscard]] virtual Result<void> check() { return {}; }
};

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

struct StateDatabaseOptions {
  // file: create the directory when it is missing (otherwise a missing directory is an error).
  bool create = false;
  // file: the file system the directory lives on (tests; default: the local one, locked with
  // open_file_state_database()).
  std::shared_ptr<FileSystem> fs;
  // postgresql: a server that cannot be reached yet is not an error: the database is returned
  // and connects on use (celos-server keeps running and retrying). Malformed URIs, refused
  // credentials and a schema newer than this binary are errors all the same.
  bool connect_later = false;
  // postgresql: when set, every write is fenced by the lease it holds (no holder: refused).
  std::shared_ptr<const WriteFence> fence;
  // postgresql: the cluster's lease; when set, every session is bounded by it (the server ends
  // a session idle in a transaction after half of it, TCP keepalives and tcp_user_timeout notice
  // a vanished peer), so that a node cut off or frozen mid-write holds no lock for long.
  std::chrono::milliseconds session_lease{0};
};

// Opens the state database named by `uri` (SPEC §11, §16): `file:/abs`, `file:rel`,
// `file:///abs` or a libpq URI `postgresql://…` / `postgres://…` (the password may come from
// PGPASSFILE). PostgreSQL's schema is created or migrated here (migrations only add).
// Errors: kInvalid for a malformed URI, refused credentials or an unknown database (exit 2);
// kCorrupt for a schema newer than this binary (exit 1); kFailed for a server that cannot be
// reached (unless options.connect_later). Messages name host, port and database, never the
// password.
[[nodiscard]] Result<std::unique_ptr<StateDatabase>> open_state_database(
    std::string_view uri, const StateDatabaseOptions& options = {});

// What --import-db copied.
struct ImportReport {
  std::size_t slots = 0, reruns = 0, paused = 0, history = 0;
};
// Copies the file database `dir` (the original Celos's included) into the PostgreSQL database
// `uri` in one transaction (SPEC §16): slots, rerun markers that have not expired at `now`, pause
// flags, announced dataset instances, the maintenance mode and the slot history (a torn history
// line is skipped with a warning, as readers of the file backend do). Locks `dir` for the time of
// the copy. A corrupt file is a kCorrupt error naming it, and nothing is written. A target that
// holds any slot, marker or flag is refused (kInvalid) unless `force`, which empties it first (in
// the same transaction).
[[nodiscard]] Result<ImportReport> import_file_database(const std::string& dir,
                                                        const std::string& uri, bool force,
                                                        Time now);

// The directory of a `file:` URI, or nothing for other schemes.
std::optional<std::string> file_state_database_dir(std::string_view uri);

// Connection details of a PostgreSQL URI for messages: "host H port P database D" (no password).
std::string describe_postgres_uri(std::string_view uri);

// The file database rooted at `root` (the --db directory) on `fs`.
std::unique_ptr<StateDatabase> make_file_state_database(std::shared_ptr<FileSystem> fs,
                                                        std::string root);

// The file database for a server (SPEC §11): takes an exclusive lock on `<root>/.lock` (flock,
// held until the database is destroyed; the holder's pid is written into the file), so that a
// second server on the same directory fails with an error naming the directory and the
// holder's pid. Then removes the stale temporaries of crashed writes under state/, rerun/ and
// paused/ (safe: no other writer holds the lock), logging how many. `root` must exist.
[[nodiscard]] Result<std::unique_ptr<StateDatabase>> open_file_state_database(
    std::shared_ptr<FileSystem> fs, std::string root);
// Removes the temporaries of crashed atomic writes (`.<name>.tmp-<pid>-<n>`, see
// LocalFileSystem) under `root`'s state/, rerun/ and paused/; returns how many.
std::size_t remove_stale_temporaries(const std::string& root);

// JSON of a slot state as stored and as the API prints it (without "time" when !with_time).
std::string slot_state_to_json(const SlotState& state, bool with_time = true);
// One line of the history file (JSON, no newline) and back. A line that does not parse is
// kCorrupt (a torn last line after a crash: readers skip it).
std::string history_entry_to_json(const SlotHistoryEntry& entry);
[[nodiscard]] Result<SlotHistoryEntry> history_entry_from_json(std::string_view workflow,
                                                               std::string_view line);
// Parses a stored slot file; `id` comes from the file's path. kCorrupt on bad content.
[[nodiscard]] Result<SlotState> slot_state_from_json(const SlotId& id, std::string_view json);

}  // namespace celos
