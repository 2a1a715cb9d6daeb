// Small RAII helpers over libpq shared by the PostgreSQL state database and the cluster lease.
// Private to libcelos (the scheduling model never sees libpq).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <libpq-fe.h>

#include "celos/error.h"
#include "celos/mutex.h"

namespace celos::pg {

struct ConnDeleter {
  void operator()(PGconn* c) const { PQfinish(c); }
};
struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Conn = std::unique_ptr<PGconn, ConnDeleter>;
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

// A text parameter; nullopt is SQL NULL.
using Param = std::optional<std::string>;

// How long a session may outlive its client's responsiveness (issue 33): a cluster node's
// sessions must never hold locks longer than a fraction of the lease, whatever happens to the
// node (a partition, a frozen VM). `lease` zero: no bounds (--import-db's one long transaction).
// With a lease L (see session_settings() for the exact values):
// - the server ends a session idle in a transaction for L/2 (its row locks go with it);
// - a lock is waited for at most L;
// - both sides probe an idle connection by TCP keepalive after L/3 (1 s apart, 3 probes) and
//   drop it when data sent stays unacknowledged for L (tcp_user_timeout): a peer that vanished
//   is noticed within about L + 3 s instead of the kernel's 15 min to 2 h.
struct SessionLimits {
  std::chrono::milliseconds lease{0};
};

// The SET statements (one script) that put `limits` on a session, with the time zone UTC.
std::string session_settings(const SessionLimits& limits);

// Connects to `uri` (connect_timeout 5 s unless the URI says otherwise; keepalives and
// tcp_user_timeout from `limits` unless the URI sets them). On failure: kInvalid when the server
// refused us (credentials, unknown database), kFailed when it could not be reached. The message
// names host, port and database.
[[nodiscard]] Result<Conn> connect(const std::string& uri, const SessionLimits& limits = {});

// Runs one statement with text parameters. `what` prefixes the error message.
[[nodiscard]] Result<ResultPtr> exec(PGconn* conn, const std::string& sql,
                                     const std::vector<Param>& params = {});

// Runs SQL text that may hold several statements, without parameters.
[[nodiscard]] Result<void> exec_script(PGconn* conn, const std::string& sql);

// "host H port P database D" of a connection or a URI.
std::string describe(PGconn* conn);

// Runs `copy_sql` (a `COPY … FROM STDIN`, text format) and sends `data` (rows of
// tab-separated fields, each ended by a newline; see copy_field).
[[nodiscard]] Result<void> copy_in(PGconn* conn, const std::string& copy_sql,
                                   std::string_view data);
// Appends one field of COPY's text format (\N for NULL; backslash, tab, newline and carriage
// return escaped), followed by `end` ('\t' between fields, '\n' after the last).
void copy_field(std::string& out, const Param& value, char end);

// A PostgreSQL array literal of text elements ({"a","b",NULL}).
std::string array_literal(const std::vector<Param>& values);

// A string literal for SQL text ('…', or E'…' with backslashes), for the rare statement that
// cannot take parameters (several statements in one message).
std::string literal(PGconn* conn, std::string_view text);

// The SQLSTATE of a failed result ("" when there is none).
std::string sqlstate(PGresult* r);

// The text of a field, or nullopt for NULL.
std::optional<std::string> field(PGresult* r, int row, int col);

// A small pool of connections to one URI: take() hands out an idle connection or opens a new
// one; give back healthy connections with put(). Thread-safe.
class Pool {
 public:
  explicit Pool(std::string uri, SessionLimits limits = {})
      : uri_(std::move(uri)), limits_(limits) {}
  [[nodiscard]] Result<Conn> take();
  void put(Conn conn);
  const std::string& uri() const { return uri_; }

 private:
  std::string uri_;
  SessionLimits limits_;
  Mutex mutex_;
  std::vector<Conn> idle_ GUARDED_BY(mutex_);
};

// A connection taken from a pool for one scope, returned when healthy.
class PooledConn {
 public:
  PooledConn(Pool& pool, Conn conn) : pool_(pool), conn_(std::move(conn)) {}
  ~PooledConn() {
    if (conn_ && PQstatus(conn_.get()) == CONNECTION_OK &&
        PQtransactionStatus(conn_.get()) == PQTRANS_IDLE) {
      pool_.put(std::move(conn_));
    }
  }
  PooledConn(const PooledConn&) = delete;
  PooledConn& operator=(const PooledConn&) = delete;
  PGconn* get() const { return conn_.get(); }

 private:
  Pool& pool_;
  Conn conn_;
};

}  // namespace celos::pg
