// The lease check of a fenced write (postgres_schema.h's run_fenced): why it is atomic with
// the COMMIT against a concurrent takeover without a lock held while the write runs.
#include <fmt/format.h>

#include "celos/write_fence.h"
#include "io/pg.h"
#include "io/postgres/postgres_schema.h"

namespace celos {

// Sends `statement` (BEGIN or COMMIT) in one message with the lease check of `holder` (none:
// an unfenced database, the statement alone). The check divides by the number of lease rows
// naming this node's epoch as current, so a lost lease is an error (division by zero, 22012)
// that aborts the transaction: after an error, the rest of a message is not run, COMMIT
// included.
//
// Why the check before COMMIT is atomic with the commit against a concurrent takeover,
// although no lock is held while the write runs (SPEC §11, §16):
// - `locked`: the check takes FOR SHARE on the lease row, and the takeover's (and renewal's)
//   UPDATE needs an exclusive lock on it; the two wait for each other.
//   - A takeover that committed before the check: the check reads the newest row version (READ
//     COMMITTED: a fresh snapshot per statement), the epoch differs, the write is refused.
//   - A takeover in flight (row locked, not committed): the check waits for it and then
//     re-reads the updated row (PostgreSQL re-checks the WHERE of a locking read against the
//     newest version): refused; if the takeover rolled back, the old row still holds.
//   - The check first: the takeover waits until our COMMIT is done, so the new leader, which
//     reads only after its takeover committed, sees this write.
// - The lock lives only while the server runs this one message, which it has received whole
//   before it runs any of it (the simple query protocol): nothing the client does or fails to
//   do (a partition, SIGSTOP) can stretch it. The lock FOR SHARE at the start of every write
//   (before issue 33) was held until COMMIT, and a leader cut off before COMMIT kept every
//   other node's takeover waiting as long as PostgreSQL kept its session.
// The row locks of the write itself (slots) are released when the server ends a session idle
// in its transaction (pg::SessionLimits: half the lease). Under a stricter default isolation
// (REPEATABLE READ) a takeover after the snapshot makes the locking read fail with a
// serialization error instead: refused all the same.
Result<void> run_fenced(PGconn* c, const char* statement,
                        const std::optional<WriteFence::Holder>& holder, bool locked) {
  if (!holder) {
    auto r = pg::exec(c, statement);
    if (!r) return tl::unexpected(r.error());
    return {};
  }
  const std::string check = fmt::format(
      "SELECT 1 / count(*) FROM (SELECT 1 FROM celos_lease WHERE cluster = {} AND holder = {} "
      "AND epoch = {} AND expires > statement_timestamp(){}) AS held",
      pg::literal(c, holder->cluster), pg::literal(c, holder->node_id), holder->epoch,
      locked ? " FOR SHARE" : "");
  const std::string sql = locked ? check + "; " + statement : std::string(statement) + "; " + check;
  pg::ResultPtr r(PQexec(c, sql.c_str()));
  const ExecStatusType status = PQresultStatus(r.get());
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return {};
  if (pg::sqlstate(r.get()) == "22012") {
    return fail(
        fmt::format("this node lost the cluster lease (epoch {}): write refused", holder->epoch));
  }
  std::string message = PQresultErrorMessage(r.get());
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return fail(fmt::format("state database at {}: {}", pg::describe(c), message));
}

}  // namespace celos
