// The PostgreSQL room's face to the rest of libcelos: what other folders may call. Everything
// else in io/postgres/ is private to it (row codecs, the slot cache, the audit table).
//
// The cluster (cluster/postgres_cluster.cc) shares the database and its schema with the state
// database; io/state_db_uri.cc opens the state database for a postgres:// URI.
#pragma once

#include <memory>
#include <string>

#include <libpq-fe.h>

#include "celos/error.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"

namespace celos {

// The schema version this binary writes.
inline constexpr int kPostgresSchemaVersion = 9;

// Creates the tables or migrates them to kPostgresSchemaVersion in one transaction, serialized
// between nodes starting at once by a transaction-level advisory lock (works through a pooler).
// kCorrupt when the database carries a newer version than this binary knows.
[[nodiscard]] Result<void> migrate_schema(PGconn* conn);

// The PostgreSQL backend behind open_state_database().
[[nodiscard]] Result<std::unique_ptr<StateDatabase>> open_postgres_state_database(
    const std::string& uri, const StateDatabaseOptions& options);

}  // namespace celos
