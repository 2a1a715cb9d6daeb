// The PostgreSQL schema of celos and its migrations (private to libcelos/src/io).
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <vector>

#include "celos/error.h"
#include "celos/state_db.h"

namespace celos {

// The schema version this binary writes.
inline constexpr int kPostgresSchemaVersion = 6;

// Creates the tables or migrates them to kPostgresSchemaVersion in one transaction, serialized
// between nodes starting at once by a transaction-level advisory lock (works through a pooler).
// kCorrupt when the database carries a newer version than this binary knows.
[[nodiscard]] Result<void> migrate_schema(PGconn* conn);

// Upserts slot states (ids unique) with a few multi-row statements on `conn` (in the caller's
// transaction).
[[nodiscard]] Result<void> insert_slot_rows(PGconn* conn, const std::vector<const SlotState*>& states);

// Appends slot history entries in their order (the table's id keeps it), a few multi-row
// statements on `conn` (in the caller's transaction).
[[nodiscard]] Result<void> insert_history_rows(PGconn* conn,
                                               const std::vector<SlotHistoryEntry>& entries);

// Slot history retention: deletes the rows of the slots whose time and every change (the
// entry's "at") are before `before`, in its own transaction without the lease (deleting old
// history twice does no harm, and a long delete must not hold the lease row). Returns how many.
[[nodiscard]] Result<std::size_t> delete_old_history_rows(PGconn* conn, Time before);

// The PostgreSQL backend behind open_state_database().
[[nodiscard]] Result<std::unique_ptr<StateDatabase>> open_postgres_state_database(
    const std::string& uri, const StateDatabaseOptions& options);

}  // namespace celos
