// Opening a state database by URI (SPEC §11, §16), the file database's constructors and lock,
// and --import-db. The interface itself is celos/state_db.h.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "celos/error.h"
#include "celos/file_system.h"
#include "celos/state_db.h"
#include "celos/time.h"
#include "celos/write_fence.h"

namespace celos {

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
  std::size_t slots = 0, reruns = 0, paused = 0, backfills = 0, history = 0;
};
// Copies the file database `dir` (the original Celos's included) into the PostgreSQL database
// `uri` in one transaction (SPEC §16): slots, rerun markers that have not expired at `now`, pause
// flags, announced dataset instances (the day files and the per-instance files of earlier
// versions; an instance in both keeps its earliest stamp), the maintenance mode, the backfill
// plans (issue 29; a plan's slots carry its id in their states) and the slot history (a torn line
// of a history or announcement day file is skipped with a warning, as readers of the file backend
// do). Locks `dir` for the time of the copy. A corrupt file is a kCorrupt error naming it, and
// nothing is written. A target that holds any slot, marker or flag is refused (kInvalid) unless
// `force`, which empties it first (in the same transaction).
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

}  // namespace celos
