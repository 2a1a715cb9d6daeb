// The audit trail (SPEC §13): every mutating request, accepted or refused, as one record
// {"time", "node", "client", "token" (name or null), "method", "path", "query", "status"}.
// Secrets never appear in it (tokens are named, never shown).
//
// AuditSink is the seam: the file sink below writes <logs>/audit.log (one JSON line per record,
// rolled at UTC midnight like the server log); a table-backed sink can sit beside it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "celos/error.h"
#include "celos/time.h"

namespace celos {

struct AuditRecord {
  Time time{};
  std::string node;    // this server (host:port)
  std::string client;  // the peer address (or X-Forwarded-For of a forwarded request)
  std::optional<std::string> token;  // the token's name
  std::string method;
  std::string path;
  std::string query;  // the raw query string, without '?'
  int status = 0;
};

std::string audit_record_to_json(const AuditRecord& record);
[[nodiscard]] Result<AuditRecord> audit_record_from_json(std::string_view json);

class AuditSink {
 public:
  virtual ~AuditSink() = default;
  // Appends one record; a failure is logged (the request has been answered already).
  virtual void append(const AuditRecord& record) = 0;
  // The newest records first, at most `limit`, only those at or after `since`.
  [[nodiscard]] virtual Result<std::vector<AuditRecord>> latest(std::optional<Time> since,
                                                                std::size_t limit) = 0;
};

// <directory>/audit.log, today's records; at the first record of a new UTC day the file is
// renamed audit.log.<yyyy-mm-dd> (the day it holds; days are the records' times). Only
// `keep_days` rolled files are kept. Thread-safe.
std::unique_ptr<AuditSink> make_file_audit_sink(std::string directory, int keep_days = 90);

}  // namespace celos
