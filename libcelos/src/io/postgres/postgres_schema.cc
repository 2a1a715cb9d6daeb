#include "io/postgres/postgres_schema.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "io/pg.h"

namespace celos {
namespace {

// Migration i takes the schema from version i to i + 1. Migrations only add (tables, nullable
// columns, indexes), so an older binary keeps working on a newer schema's data... until it
// refuses to start on it, which it does (a newer version is an error).
constexpr const char* kMigrations[] = {
    // 0 -> 1: slots, rerun markers, pause flags; the cluster's lease and node list.
    "CREATE TABLE celos_slots ("
    "  workflow text NOT NULL, slot_time timestamptz NOT NULL, status text NOT NULL,"
    "  external_id text, retry_count integer NOT NULL DEFAULT 0, message text,"
    "  retry_at timestamptz, consumed jsonb, PRIMARY KEY (workflow, slot_time));"
    "CREATE TABLE celos_reruns ("
    "  workflow text NOT NULL, slot_time timestamptz NOT NULL, rerun_time timestamptz NOT NULL,"
    "  PRIMARY KEY (workflow, slot_time));"
    "CREATE TABLE celos_paused (workflow text PRIMARY KEY);"
    "CREATE TABLE celos_lease ("
    "  cluster text PRIMARY KEY, holder text, url text, epoch bigint NOT NULL,"
    "  since timestamptz, expires timestamptz NOT NULL);"
    "CREATE TABLE celos_nodes ("
    "  cluster text NOT NULL, id text NOT NULL, url text NOT NULL, role text NOT NULL,"
    "  last_seen timestamptz NOT NULL, PRIMARY KEY (cluster, id));",
    // 1 -> 2: announced dataset instances (SPEC §14).
    "CREATE TABLE celos_announced ("
    "  dataset text NOT NULL, instance_time timestamptz NOT NULL,"
    "  announced timestamptz NOT NULL, PRIMARY KEY (dataset, instance_time));",
    // 2 -> 3: slot history (SPEC §13), one row per change, the entry as the file backend's line.
    "CREATE TABLE celos_history ("
    "  id bigserial PRIMARY KEY, workflow text NOT NULL, slot_time timestamptz NOT NULL,"
    "  entry text NOT NULL);"
    "CREATE INDEX celos_history_slot ON celos_history (workflow, slot_time, id);",
    // 3 -> 4: the maintenance mode (SPEC §13), one row holding its JSON record.
    "CREATE TABLE celos_maintenance (id integer PRIMARY KEY CHECK (id = 1), record text NOT NULL);",
    // 4 -> 5: the audit trail of every node (SPEC §13; io/postgres/postgres_audit_sink.cc).
    "CREATE TABLE IF NOT EXISTS celos_audit ("
    "  id bigserial PRIMARY KEY, at timestamptz NOT NULL, node text NOT NULL,"
    "  client text NOT NULL, token text, method text NOT NULL, path text NOT NULL,"
    "  query text NOT NULL, status integer NOT NULL, truncated jsonb,"
    "  suppressed bigint NOT NULL DEFAULT 0);"
    "CREATE INDEX IF NOT EXISTS celos_audit_at ON celos_audit (at, id);",
    // 5 -> 6: the secret that authenticates forwarding between the cluster's nodes (issue 33).
    "CREATE TABLE celos_cluster_secret (cluster text PRIMARY KEY, secret text NOT NULL);",
    // 6 -> 7: backfill plans (issue 29): the plan owning a slot, and the plans' JSON records.
    // (one migration of two statements: the parentheses tell clang the joined literals are meant)
    ("ALTER TABLE celos_slots ADD COLUMN backfill text;"
     "CREATE TABLE celos_backfills (id text PRIMARY KEY, record text NOT NULL);"),
    // 7 -> 8: a slot's deadline and the highest deadline state it reached (issue 27).
    "ALTER TABLE celos_slots ADD COLUMN deadline timestamptz, ADD COLUMN deadline_state text;",
    // 8 -> 9: the OpenLineage run id of a RUNNING slot's attempt (issue 32; "runId").
    "ALTER TABLE celos_slots ADD COLUMN IF NOT EXISTS run_id text;",
};
constexpr int kMigrationCount = static_cast<int>(std::size(kMigrations));
static_assert(kMigrationCount == kPostgresSchemaVersion);

Result<int> stored_version(PGconn* c) {
  auto r = pg::exec(c, "CREATE TABLE IF NOT EXISTS celos_schema (version integer NOT NULL)");
  if (!r) return tl::unexpected(r.error());
  r = pg::exec(c, "SELECT max(version) FROM celos_schema");
  if (!r) return tl::unexpected(r.error());
  auto v = pg::field(r->get(), 0, 0);
  return v ? std::stoi(*v) : 0;
}

Result<void> migrate_locked(PGconn* c) {
  // An arbitrary constant: "celos" in ASCII.
  auto locked = pg::exec(c, "SELECT pg_advisory_xact_lock(435459051891)");
  if (!locked) return tl::unexpected(locked.error());
  auto version = stored_version(c);
  if (!version) return tl::unexpected(version.error());
  if (*version > kPostgresSchemaVersion) {
    return fail(fmt::format("state database at {} has schema version {}, newer than this "
                            "celos knows ({}): upgrade celos",
                            pg::describe(c), *version, kPostgresSchemaVersion),
                ErrorCode::kCorrupt);
  }
  for (int v = *version; v < kPostgresSchemaVersion; ++v) {
    if (auto m = pg::exec_script(c, kMigrations[v]); !m) return m;
    auto r = pg::exec(c, "INSERT INTO celos_schema (version) VALUES ($1)", {std::to_string(v + 1)});
    if (!r) return tl::unexpected(r.error());
    spdlog::info("state database at {}: schema migrated to version {}", pg::describe(c), v + 1);
  }
  return {};
}

}  // namespace

Result<void> migrate_schema(PGconn* c) {
  if (auto begun = pg::exec(c, "BEGIN"); !begun) return tl::unexpected(begun.error());
  auto done = migrate_locked(c);
  if (!done) {
    (void)pg::exec(c, "ROLLBACK");
    return done;
  }
  auto committed = pg::exec(c, "COMMIT");
  if (!committed) return tl::unexpected(committed.error());
  return {};
}

}  // namespace celos
