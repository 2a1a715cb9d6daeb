// The PostgreSQL schema's row codecs and retention (private to io/postgres/; the migrations and
// the opening of the backend are the room's face, postgres.h).
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <vector>

#include "celos/error.h"
#include "celos/state_db.h"
#include "io/postgres/postgres.h"

namespace celos {

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

}  // namespace celos
