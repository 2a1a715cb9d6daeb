// The PostgreSQL schema of celos and its migrations (private to libcelos/src/io).
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <string>

#include "celos/error.h"
#include "celos/state_db.h"

namespace celos {

// The schema version this binary writes.
inline constexpr int kPostgresSchemaVersion = 2;

// Creates the tables or migrates them to kPostgresSchemaVersion in one transaction, serialized
// between nodes starting at once by a transaction-level advisory lock (works through a pooler).
// kCorrupt when the database carries a newer version than this binary knows.
[[nodiscard]] Result<void> migrate_schema(PGconn* conn);

// The PostgreSQL backend behind open_state_database().
[[nodiscard]] Result<std::unique_ptr<StateDatabase>> open_postgres_state_database(
    const std::string& uri, const StateDatabaseOptions& options);

}  // namespace celos
