// The audit trail (SPEC §13): every mutating request, accepted or refused, as one record
// {"time", "node", "client", "token" (name or null), "method", "path", "query", "status"}.
// Secrets never appear in it (tokens are named, never shown).
//
// Bounded (issue 33): fields longer than kAuditFieldLimits are cut (on a UTF-8 boundary) and the
// record says so ("truncated": {"query": <original bytes>}); refusals are rate-limited per
// client (make_rate_limited_audit_sink: over the limit the refusal is answered but not written;
// the client's next written record is preceded by one record counting what was suppressed).
//
// AuditSink is the seam: the file sink writes <logs>/audit.log (one JSON line per record, rolled
// at UTC midnight, `keep_days` days kept) and reads it backwards; with PostgreSQL a table sink
// (celos_audit, every node writes it) sits beside it and answers the reads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "celos/clock.h"
#include "celos/error.h"
#include "celos/time.h"

namespace celos {

struct AuditRecord {
  Time time{};
  std::string node;                  // this server (host:port)
  std::string client;                // the peer address (or X-Forwarded-For of a forwarded request)
  std::optional<std::string> token;  // the token's name
  std::string method;
  std::string path;
  std::string query;  // the raw query string, without '?'
  int status = 0;
  // Fields cut by bound_audit_record, with their original size in bytes ("truncated").
  std::map<std::string, std::size_t> truncated;
  // > 0: this record stands for that many refusals of `client` that were not written one by
  // one (rate limit); method, path and status are the last of them ("suppressed").
  std::uint64_t suppressed = 0;
  // Refused before the route ran (Host/Origin, token): subject to the rate limit. Not stored.
  bool refused = false;
};

// The longest value (bytes) each field keeps; documented in docs/operations.md.
struct AuditFieldLimits {
  static constexpr std::size_t kNode = 256, kClient = 256, kToken = 128, kMethod = 16, kPath = 1024,
                               kQuery = 2048;
};
// Cuts over-long fields to AuditFieldLimits (never inside a UTF-8 sequence) and notes them in
// `truncated`. A bounded record serializes to at most ~4 KB.
void bound_audit_record(AuditRecord& record);

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
// `keep_days` rolled files are kept (checked at start and at every roll). latest() reads the
// files backwards in blocks: its memory is bounded by `limit` records, not by the files' size.
// Thread-safe.
std::unique_ptr<AuditSink> make_file_audit_sink(std::string directory, int keep_days = 90);

// The celos_audit table of a PostgreSQL state database (SPEC §13), for every node of a
// cluster: append() queues (bounded: 10,000 records, the oldest dropped with a log line) and a
// thread of its own inserts, so a request never waits for the database; rows older than
// `keep_days` are deleted hourly; the hour and the pause after a failed insert are on `clock`.
// latest() queries the table.
std::unique_ptr<AuditSink> make_postgres_audit_sink(std::string uri, int keep_days = 90,
                                                    Clock& clock = system_clock());

// Appends to both; latest() asks `reader` and, when it fails, `fallback` (with a log line).
std::unique_ptr<AuditSink> make_tee_audit_sink(std::unique_ptr<AuditSink> fallback,
                                               std::unique_ptr<AuditSink> reader);

// The rate limit of refused records, per client address and for all clients together: token
// buckets of `burst` records refilled at `per_second`.
struct AuditRateLimit {
  double client_burst = 20, client_per_second = 1;
  double total_burst = 200, total_per_second = 50;
  std::size_t max_clients = 10000;  // clients tracked at once (the rest share the total bucket)
  std::function<Clock::Monotonic()> clock = {};  // empty: system_clock().monotonic()
  // Called with the number of records suppressed (celos_audit_suppressed_total).
  std::function<void(std::uint64_t)> on_suppressed = {};
};
// Forwards accepted records unchanged and refused ones within the limits; over a limit a
// refused record is counted, not written. The first record of that client written afterwards
// (or, for a client that went quiet, the next record of anyone once the client's bucket is
// full again) is preceded by a record with "suppressed": N. Thread-safe.
std::unique_ptr<AuditSink> make_rate_limited_audit_sink(std::unique_ptr<AuditSink> inner,
                                                        AuditRateLimit limit);

}  // namespace celos
