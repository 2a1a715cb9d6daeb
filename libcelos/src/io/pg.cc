#include "io/pg.h"

#include <algorithm>

#include <fmt/format.h>

namespace celos::pg {

std::string describe(PGconn* conn) {
  const char* host = PQhost(conn);
  const char* port = PQport(conn);
  const char* db = PQdb(conn);
  return fmt::format("host {} port {} database {}", host && *host ? host : "(default)",
                     port && *port ? port : "5432", db && *db ? db : "(default)");
}

namespace {

// The server answered and said no (a FATAL message), as opposed to a server that is down or
// still starting: a configuration error that retrying will not fix.
bool refused(std::string_view message) {
  if (message.find("FATAL") == std::string_view::npos &&
      message.find("password") == std::string_view::npos) {
    return false;
  }
  for (std::string_view transient :
       {"starting up", "shutting down", "too many", "recovery mode", "not yet accepting"}) {
    if (message.find(transient) != std::string_view::npos) return false;
  }
  return true;
}

std::string trimmed_pg(const char* text) {
  std::string s = text ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  return s;
}

}  // namespace

std::string session_settings(const SessionLimits& limits) {
  std::string sql = "SET TIME ZONE 'UTC'";
  const long long l = limits.lease.count();
  if (l <= 0) return sql;
  // Each at least a second: a lease of 2 s must not turn into timeouts of a few milliseconds.
  const long long idle = std::max(1000LL, l / 2), probe = std::max(1LL, l / 3000);
  return sql + fmt::format(
                   "; SET idle_in_transaction_session_timeout = {}; SET lock_timeout = {}"
                   "; SET tcp_keepalives_idle = {}; SET tcp_keepalives_interval = 1"
                   "; SET tcp_keepalives_count = 3; SET tcp_user_timeout = {}",
                   idle, std::max(1000LL, l), probe, std::max(1000LL, l));
}

Result<Conn> connect(const std::string& uri, const SessionLimits& limits) {
  // Our defaults first: keywords after the expanded URI would override the URI's own.
  const long long l = limits.lease.count();
  const std::string probe = std::to_string(std::max(1LL, l / 3000));
  const std::string unacked = std::to_string(std::max(1000LL, l));
  std::vector<const char*> keys = {"connect_timeout", "application_name"};
  std::vector<const char*> values = {"5", "celos"};
  if (l > 0) {
    for (const char* k : {"keepalives", "keepalives_idle", "keepalives_interval",
                          "keepalives_count", "tcp_user_timeout"}) {
      keys.push_back(k);
    }
    for (const char* v : {"1", probe.c_str(), "1", "3", unacked.c_str()}) values.push_back(v);
  }
  keys.push_back("dbname");
  values.push_back(uri.c_str());
  keys.push_back(nullptr);
  values.push_back(nullptr);
  Conn conn(PQconnectdbParams(keys.data(), values.data(), 1));
  if (!conn) return fail("out of memory connecting to PostgreSQL");
  PQsetNoticeProcessor(
      conn.get(), [](void*, const char*) {}, nullptr);  // NOTICEs: not errors
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    const std::string message = trimmed_pg(PQerrorMessage(conn.get()));
    return fail(fmt::format("state database at {}: {}", describe(conn.get()), message),
                refused(message) ? ErrorCode::kInvalid : ErrorCode::kFailed);
  }
  ResultPtr r(PQexec(conn.get(), session_settings(limits).c_str()));
  if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
    return fail(fmt::format("state database at {}: {}", describe(conn.get()),
                            trimmed_pg(PQerrorMessage(conn.get()))));
  }
  return conn;
}

Result<ResultPtr> exec(PGconn* conn, const std::string& sql, const std::vector<Param>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const Param& p : params) values.push_back(p ? p->c_str() : nullptr);
  ResultPtr r(PQexecParams(conn, sql.c_str(), static_cast<int>(values.size()), nullptr,
                           values.data(), nullptr, nullptr, 0));
  const ExecStatusType status = PQresultStatus(r.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return fail(
        fmt::format("state database at {}: {}", describe(conn), trimmed_pg(PQerrorMessage(conn))));
  }
  return r;
}

Result<void> exec_script(PGconn* conn, const std::string& sql) {
  ResultPtr r(PQexec(conn, sql.c_str()));
  const ExecStatusType status = PQresultStatus(r.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return fail(
        fmt::format("state database at {}: {}", describe(conn), trimmed_pg(PQerrorMessage(conn))));
  }
  return {};
}

Result<void> copy_in(PGconn* conn, const std::string& copy_sql, std::string_view data) {
  auto error = [conn] {
    return fail(
        fmt::format("state database at {}: {}", describe(conn), trimmed_pg(PQerrorMessage(conn))));
  };
  ResultPtr started(PQexec(conn, copy_sql.c_str()));
  if (PQresultStatus(started.get()) != PGRES_COPY_IN) return error();
  constexpr std::size_t kChunk = 1 << 20;
  bool sent = true;
  for (std::size_t at = 0; sent && at < data.size(); at += kChunk) {
    const std::size_t n = std::min(kChunk, data.size() - at);
    sent = PQputCopyData(conn, data.data() + at, static_cast<int>(n)) == 1;
  }
  if (PQputCopyEnd(conn, sent ? nullptr : "celos: sending the rows failed") != 1) return error();
  Result<void> out;
  while (PGresult* raw = PQgetResult(conn)) {
    ResultPtr r(raw);
    if (out && PQresultStatus(r.get()) != PGRES_COMMAND_OK) out = error();
  }
  if (out && !sent) out = error();
  return out;
}

void copy_field(std::string& out, const Param& value, char end) {
  if (!value) {
    out += "\\N";
  } else {
    for (char c : *value) {
      switch (c) {
        case '\\':
          out += "\\\\";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        default:
          out += c;
      }
    }
  }
  out += end;
}

std::string array_literal(const std::vector<Param>& values) {
  std::string out = "{";
  for (const Param& v : values) {
    if (out.size() > 1) out += ',';
    if (!v) {
      out += "NULL";
      continue;
    }
    out += '"';
    for (char c : *v) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::string literal(PGconn* conn, std::string_view text) {
  std::unique_ptr<char, decltype(&PQfreemem)> quoted(
      PQescapeLiteral(conn, text.data(), text.size()), &PQfreemem);
  return quoted ? std::string(quoted.get()) : std::string("NULL");
}

std::string sqlstate(PGresult* r) {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  return state ? state : "";
}

std::optional<std::string> field(PGresult* r, int row, int col) {
  if (PQgetisnull(r, row, col)) return std::nullopt;
  return std::string(PQgetvalue(r, row, col), static_cast<std::size_t>(PQgetlength(r, row, col)));
}

Result<Conn> Pool::take() {
  {
    MutexLock lock(mutex_);
    if (!idle_.empty()) {
      Conn c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  return connect(uri_, limits_);
}

void Pool::put(Conn conn) {
  MutexLock lock(mutex_);
  if (idle_.size() < 16) idle_.push_back(std::move(conn));
}

}  // namespace celos::pg
