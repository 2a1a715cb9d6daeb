// The celos_audit table (SPEC §13): every node of a cluster appends its records, so the trail
// of a node that is lost with its disk is kept, and any node answers GET /api/v1/audit for all.
//
// A request never waits for the database: append() queues and a thread of its own inserts in
// batches (one statement of unnest() arrays). While the database is down the queue holds up to
// kCapacity records (the file beside it has them all); the oldest are dropped beyond that.
#include <atomic>
#include <deque>
#include <thread>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/audit.h"
#include "celos/clock.h"
#include "celos/mutex.h"
#include "io/pg.h"
#include "io/postgres/postgres_schema.h"

namespace celos {
namespace {

namespace json = boost::json;

constexpr std::size_t kCapacity = 10000;
constexpr std::size_t kInsertBatch = 500;

constexpr const char* kInsert =
    "INSERT INTO celos_audit (at, node, client, token, method, path, query, status, truncated, "
    "suppressed) SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], "
    "$5::text[], $6::text[], $7::text[], $8::integer[], $9::jsonb[], $10::bigint[])";

std::optional<std::string> truncated_json(const AuditRecord& r) {
  if (r.truncated.empty()) return std::nullopt;
  json::object o;
  for (const auto& [field, size] : r.truncated) o[field] = size;
  return json::serialize(o);
}

Result<void> insert(PGconn* c, const std::vector<AuditRecord>& batch) {
  std::vector<pg::Param> columns[10];
  for (const AuditRecord& r : batch) {
    columns[0].push_back(format_time(r.time));
    columns[1].push_back(r.node);
    columns[2].push_back(r.client);
    columns[3].push_back(r.token);
    columns[4].push_back(r.method);
    columns[5].push_back(r.path);
    columns[6].push_back(r.query);
    columns[7].push_back(std::to_string(r.status));
    columns[8].push_back(truncated_json(r));
    columns[9].push_back(std::to_string(r.suppressed));
  }
  std::vector<pg::Param> params;
  for (const auto& column : columns) params.push_back(pg::array_literal(column));
  auto done = pg::exec(c, kInsert, params);
  if (!done) return tl::unexpected(done.error());
  return {};
}

// One row of the SELECT in latest() back into a record.
AuditRecord row_to_record(PGresult* r, int row) {
  AuditRecord a;
  auto text = [&](int col) { return pg::field(r, row, col).value_or(""); };
  a.time = Time{std::chrono::milliseconds(std::stoll(text(0)))};
  a.node = text(1);
  a.client = text(2);
  a.token = pg::field(r, row, 3);
  a.method = text(4);
  a.path = text(5);
  a.query = text(6);
  a.status = std::stoi(text(7));
  if (auto cut = pg::field(r, row, 8)) {
    boost::system::error_code ec;
    const json::value v = json::parse(*cut, ec);
    if (!ec && v.is_object()) {
      for (const auto& [field, size] : v.get_object()) {
        if (size.is_int64())
          a.truncated[std::string(field)] = static_cast<std::size_t>(size.get_int64());
      }
    }
  }
  a.suppressed = std::stoull(text(9));
  return a;
}

class PostgresAuditSink final : public AuditSink {
 public:
  // Its sessions are bounded like the state database's (pg::SessionLimits, at the default lease):
  // a database that vanished mid-write is noticed by TCP in seconds, not after 15 min to 2 h.
  PostgresAuditSink(std::string uri, int keep_days, Clock& clock)
      : pool_(std::move(uri), pg::SessionLimits{std::chrono::seconds(10)}),
        keep_days_(std::max(keep_days, 1)),
        clock_(clock),
        thread_([this] { loop(); }) {}

  ~PostgresAuditSink() override {
    {
      MutexLock lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

  void append(const AuditRecord& record) override EXCLUDES(mutex_) {
    {
      MutexLock lock(mutex_);
      if (queue_.size() >= kCapacity) {
        queue_.pop_front();
        ++dropped_while_writing_;
        if (++dropped_ % 1000 == 1) {
          spdlog::error(
              "audit table: {} records not written (database unreachable; "
              "they are in this node's audit.log)",
              dropped_);
        }
      }
      queue_.push_back(record);
    }
    wake_.notify_one();
  }

  Result<std::vector<AuditRecord>> latest(std::optional<Time> since, std::size_t limit) override {
    auto conn = connected();
    if (!conn) return tl::unexpected(conn.error());
    pg::PooledConn c(pool_, std::move(*conn));
    std::string sql =
        "SELECT (extract(epoch FROM at) * 1000)::bigint, node, client, token, method, path, "
        "query, status, truncated::text, suppressed FROM celos_audit";
    std::vector<pg::Param> params{std::to_string(limit)};
    if (since) {
      sql += " WHERE at >= $2";
      params.push_back(format_time(*since));
    }
    sql += " ORDER BY at DESC, id DESC LIMIT $1";
    auto r = pg::exec(c.get(), sql, params);
    if (!r) return tl::unexpected(r.error());
    std::vector<AuditRecord> out;
    for (int row = 0; row < PQntuples(r->get()); ++row) out.push_back(row_to_record(r->get(), row));
    return out;
  }

 private:
  // A pooled connection to a migrated schema (the state database may not have migrated yet).
  Result<pg::Conn> connected() {
    auto conn = pool_.take();
    if (!conn) return conn;
    if (!migrated_) {
      if (auto ok = migrate_schema(conn->get()); !ok) return tl::unexpected(ok.error());
      migrated_ = true;
    }
    return conn;
  }

  // Writes queued records in batches; on failure keeps them and retries after a pause.
  void loop() EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    auto pause = std::chrono::seconds(0);
    for (;;) {
      wait_for_work(pause);
      if (stopping_ && (queue_.empty() || pause.count() > 0)) break;
      const std::size_t n = std::min(queue_.size(), kInsertBatch);
      std::vector<AuditRecord> batch(queue_.begin(), queue_.begin() + static_cast<long>(n));
      dropped_while_writing_ = 0;
      lock.unlock();
      const bool ok = write(batch);
      lock.lock();
      if (ok) {
        // append() may have dropped some of the batch from the front meanwhile.
        const std::size_t left = n - std::min(n, dropped_while_writing_);
        queue_.erase(queue_.begin(), queue_.begin() + static_cast<long>(left));
        pause = std::chrono::seconds(0);
      } else {
        pause = std::min<std::chrono::seconds>(std::max(pause * 2, std::chrono::seconds(1)),
                                               std::chrono::seconds(30));
      }
    }
    if (!queue_.empty()) {
      spdlog::warn("audit table: stopping with {} records not written (they are in audit.log)",
                   queue_.size());
    }
  }

  // Until there are records to write (no pause) or the pause is over; either ends on stopping.
  void wait_for_work(std::chrono::seconds pause) REQUIRES(mutex_) {
    if (pause.count() > 0) {
      const Clock::Monotonic deadline = clock_.monotonic() + pause;
      while (!stopping_ && clock_.wait_until(wake_, mutex_, deadline)) {
      }
    } else {
      while (!stopping_ && queue_.empty()) wake_.wait(mutex_);
    }
  }

  bool write(const std::vector<AuditRecord>& batch) {
    auto conn = connected();
    Result<void> done = conn ? Result<void>{} : tl::unexpected(conn.error());
    if (conn) {
      pg::PooledConn c(pool_, std::move(*conn));
      if (!batch.empty()) done = insert(c.get(), batch);
      if (done) expire(c.get());
    }
    if (!done && !failing_) spdlog::error("audit table: {} (retrying)", done.error().message);
    if (done && failing_) spdlog::info("audit table: written again");
    failing_ = !done;
    return static_cast<bool>(done);
  }

  // Hourly: rows older than keep_days go (any node may do it; deleting twice is harmless).
  void expire(PGconn* c) {
    const Clock::Monotonic now = clock_.monotonic();
    if (expired_at_ && now - *expired_at_ < std::chrono::hours(1)) return;
    expired_at_ = now;
    auto r = pg::exec(c, "DELETE FROM celos_audit WHERE at < now() - make_interval(days => $1)",
                      {std::to_string(keep_days_)});
    if (!r) spdlog::error("audit table: cannot remove expired records: {}", r.error().message);
  }

  pg::Pool pool_;
  int keep_days_;
  std::atomic<bool> migrated_{false};
  Clock& clock_;
  Mutex mutex_;
  CondVar wake_;
  std::deque<AuditRecord> queue_ GUARDED_BY(mutex_);
  std::uint64_t dropped_ GUARDED_BY(mutex_) = 0;
  std::size_t dropped_while_writing_ GUARDED_BY(mutex_) = 0;
  bool stopping_ GUARDED_BY(mutex_) = false;
  bool failing_ = false;                        // written by the thread only
  std::optional<Clock::Monotonic> expired_at_;  // the thread only
  std::thread thread_;
};

}  // namespace

std::unique_ptr<AuditSink> make_postgres_audit_sink(std::string uri, int keep_days, Clock& clock) {
  return std::make_unique<PostgresAuditSink>(std::move(uri), keep_days, clock);
}

}  // namespace celos
