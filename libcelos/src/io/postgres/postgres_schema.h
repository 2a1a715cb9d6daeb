// The PostgreSQL schema's row codecs and retention, and the lease check of fenced writes
// (private to io/postgres/; the migrations and the opening of the backend are the room's face,
// postgres.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <libpq-fe.h>

#include "celos/error.h"
#include "celos/state_db.h"
#include "celos/write_fence.h"
#include "io/postgres/postgres.h"

namespace celos {

// Upserts slot states (ids unique) with a few multi-row statements on `conn` (in the caller's
// transaction).
[[nodiscard]] Result<void> insert_slot_rows(PGconn* conn,
                                            const std::vector<const SlotState*>& states);

// Appends slot history entries in their order (the table's id keeps it), a few multi-row
// statements on `conn` (in the caller's transaction).
[[nodiscard]] Result<void> insert_history_rows(PGconn* conn,
                                               const std::vector<SlotHistoryEntry>& entries);

// Slot history retention: deletes the rows of the slots whose time and every change (the
// entry's "at") are before `before`, in its own transaction without the lease (deleting old
// history twice does no harm, and a long delete must not hold the lease row). Returns how many.
[[nodiscard]] Result<std::size_t> delete_old_history_rows(PGconn* conn, Time before);

// The columns of a slot row as row_to_state() reads them; append a WHERE clause.
inline constexpr const char* kSelectSlotRows =
    "SELECT workflow, (extract(epoch FROM slot_time) * 1000)::bigint, status, external_id, "
    "retry_count, message, (extract(epoch FROM retry_at) * 1000)::bigint, consumed::text, "
    "backfill, (extract(epoch FROM deadline) * 1000)::bigint, deadline_state, run_id "
    "FROM celos_slots";

// The slot state of row `row` of a kSelectSlotRows query, or of every row; kCorrupt naming a row
// that does not read.
[[nodiscard]] Result<SlotState> row_to_state(PGresult* r, int row);
[[nodiscard]] Result<std::vector<SlotState>> rows_to_states(PGresult* r);

// A time read as epoch milliseconds (extract(epoch …) * 1000); kCorrupt for NULL.
[[nodiscard]] Result<Time> time_from_ms(const std::optional<std::string>& text);

// Sends `statement` (BEGIN or COMMIT) in one message with the check that `holder` still holds
// the lease (postgres_fence.cc; none: an unfenced database, the statement alone); `locked`
// takes FOR SHARE on the lease row (before COMMIT). A lost lease is an error that aborts the
// transaction.
[[nodiscard]] Result<void> run_fenced(PGconn* c, const char* statement,
                                      const std::optional<WriteFence::Holder>& holder, bool locked);

}  // namespace celos
