// The state database of SPEC §5 in PostgreSQL tables (SPEC §11), through libpq.
//
// Slot times are timestamptz (readable with psql and pg_dump); they travel as ISO text and come
// back as epoch milliseconds, so no time zone or float rounding is involved. A batch of slot
// states is written in one transaction with a few statements (io/postgres/postgres_slot_rows.cc:
// unnest arrays, or COPY for a large batch): the first step of 1,000 workflows (168,000 states) is
// a handful of round trips. Every write of a fenced database (a cluster node) checks the lease's
// epoch in the same message as its COMMIT (see commit_fenced()), so a node that lost the lease
// cannot write, and no lock on the lease row ever waits for the node: a leader cut off or frozen
// in the middle of a write cannot hold up the next leader's takeover (issue 33).
//
// Reading slot rows is in postgres_slot_rows.cc beside writing them; the lease check of a fenced
// write in postgres_fence.cc.
//
// The leader keeps what a step reads in a SlotCache (io/postgres/slot_cache.h), loaded by
// prefetch() in three queries and kept up to date by its own writes: a steady step of 1,000
// workflows makes no slot query at all. Writes are serialized in this process so that the cache
// sees them in commit order.
#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <set>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/mutex.h"
#include "celos/state_codecs.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"
#include "celos/write_fence.h"
#include "io/pg.h"
#include "io/postgres/postgres_schema.h"
#include "io/postgres/slot_cache.h"

namespace celos {
namespace {

constexpr std::size_t kPrefetchWorkflows = 1'000;  // workflows per prefetch query

class PostgresStateDatabase final : public StateDatabase {
 public:
  PostgresStateDatabase(std::string uri, const StateDatabaseOptions& options)
      : pool_(std::move(uri), pg::SessionLimits{options.session_lease}), fence_(options.fence) {}

  // Connects once and migrates the schema (also called lazily by the first use).
  Result<void> ready() {
    if (migrated_) return {};
    auto conn = pool_.take();
    if (!conn) return tl::unexpected(conn.error());
    pg::PooledConn c(pool_, std::move(*conn));
    auto migrated = migrate_schema(c.get());
    if (!migrated) return migrated;
    migrated_ = true;
    return {};
  }

  Result<void> check() override {
    return with_conn([](PGconn* c) -> Result<void> {
      auto r = pg::exec(c, "SELECT 1");
      if (!r) return tl::unexpected(r.error());
      return {};
    });
  }

  Result<std::optional<SlotState>> get_slot(const SlotId& id) override {
    if (auto cached = cache_.slot(cache_owner(), id)) return std::move(*cached);
    return with_conn([&](PGconn* c) -> Result<std::optional<SlotState>> {
      auto r = pg::exec(c, std::string(kSelectSlotRows) + " WHERE workflow = $1 AND slot_time = $2",
                        {id.workflow, format_time(id.time)});
      if (!r) return tl::unexpected(r.error());
      if (PQntuples(r->get()) == 0) return std::optional<SlotState>{};
      auto s = row_to_state(r->get(), 0);
      if (!s) return tl::unexpected(s.error());
      return std::optional<SlotState>(std::move(*s));
    });
  }

  Result<std::vector<SlotState>> get_slots(std::string_view workflow, Time start,
                                           Time end) override {
    if (auto cached = cache_.slots(cache_owner(), workflow, start, end)) return std::move(*cached);
    return with_conn([&](PGconn* c) -> Result<std::vector<SlotState>> {
      std::vector<SlotState> out;
      if (end <= start) return out;
      auto r = pg::exec(c,
                        std::string(kSelectSlotRows) +
                            " WHERE workflow = $1 AND slot_time >= $2 AND slot_time < $3"
                            " ORDER BY slot_time",
                        {std::string(workflow), format_time(start), format_time(end)});
      if (!r) return tl::unexpected(r.error());
      return rows_to_states(r->get());
    });
  }

  Result<void> put_slots(const std::vector<SlotState>& states) override {
    if (states.empty()) return {};
    // ON CONFLICT may touch a row once per statement: the last state of a slot wins.
    std::map<SlotId, const SlotState*> last;
    for (const SlotState& s : states) last[s.id] = &s;
    std::vector<const SlotState*> unique;
    unique.reserve(last.size());
    for (const auto& [id, s] : last) unique.push_back(s);
    return write([&](PGconn* c) -> Result<void> { return insert_slot_rows(c, unique); },
                 [&] { cache_.put(states); });
  }

  Result<void> mark_rerun(const SlotId& id, Time now) override {
    return write(
        [&](PGconn* c) -> Result<void> {
          auto expired = pg::exec(
              c,
              "DELETE FROM celos_reruns r USING celos_slots s WHERE r.workflow = $1 "
              "AND s.workflow = r.workflow AND s.slot_time = r.slot_time "
              "AND r.rerun_time <= $2::timestamptz - $3 * interval '1 hour' "
              "AND s.status NOT IN ('WAITING', 'READY', 'RUNNING')",
              {id.workflow, format_time(now), std::to_string(kRerunMarkerLifetime.count())});
          if (!expired) return tl::unexpected(expired.error());
          auto r = pg::exec(c,
                            "INSERT INTO celos_reruns (workflow, slot_time, rerun_time) "
                            "VALUES ($1, $2, $3) ON CONFLICT (workflow, slot_time) "
                            "DO UPDATE SET rerun_time = excluded.rerun_time",
                            {id.workflow, format_time(id.time), format_time(now)});
          if (!r) return tl::unexpected(r.error());
          return {};
        },
        [this] { cache_.forget_reruns(); });
  }

  Result<std::vector<Time>> rerun_times(std::string_view workflow, Time now) override {
    if (auto cached = cache_.rerun_times(cache_owner(), workflow, now)) return std::move(*cached);
    // A read (standbys cannot write): expired markers are ignored here and removed by the next
    // mark_rerun of the workflow. A marker of a slot that is not final never expires (SPEC §16).
    return with_conn([&](PGconn* c) -> Result<std::vector<Time>> {
      auto r = pg::exec(
          c,
          "SELECT (extract(epoch FROM r.slot_time) * 1000)::bigint FROM celos_reruns r "
          "LEFT JOIN celos_slots s ON s.workflow = r.workflow AND s.slot_time = r.slot_time "
          "WHERE r.workflow = $1 AND (r.rerun_time > $2::timestamptz - $3 * interval '1 hour' "
          "OR s.status IS NULL OR s.status IN ('WAITING', 'READY', 'RUNNING')) "
          "ORDER BY r.slot_time",
          {std::string(workflow), format_time(now), std::to_string(kRerunMarkerLifetime.count())});
      if (!r) return tl::unexpected(r.error());
      std::vector<Time> out;
      for (int i = 0; i < PQntuples(r->get()); ++i) {
        auto t = time_from_ms(pg::field(r->get(), i, 0));
        if (!t) return tl::unexpected(t.error());
        out.push_back(*t);
      }
      return out;
    });
  }

  Result<void> prefetch(const std::vector<std::string>& workflows, Time start) override {
    const SlotCache::Owner owner = cache_owner();
    if (!owner) return {};
    SlotCache::Missing missing = cache_.missing(owner, workflows, start);
    return with_conn([&](PGconn* c) -> Result<void> {
      // 1,000 workflows a query: one round trip for a typical leader, and a result of at most
      // 168,000 rows in memory at once for 10,000.
      for (std::size_t i = 0; i < missing.workflows.size(); i += kPrefetchWorkflows) {
        const auto first = missing.workflows.begin() + static_cast<std::ptrdiff_t>(i);
        const std::vector<std::string> some(
            first, first + static_cast<std::ptrdiff_t>(
                               std::min(kPrefetchWorkflows, missing.workflows.size() - i)));
        std::vector<pg::Param> ids(some.begin(), some.end());
        auto r = pg::exec(
            c,
            std::string(kSelectSlotRows) + " WHERE workflow = ANY($1::text[]) AND slot_time >= $2",
            {pg::array_literal(ids), format_time(start)});
        if (!r) return tl::unexpected(r.error());
        auto rows = rows_to_states(r->get());
        if (!rows) return tl::unexpected(rows.error());
        cache_.fill_slots(owner, missing.generation, some, start, std::move(*rows));
      }
      if (missing.markers) {
        auto markers = read_markers(c);
        if (!markers) return tl::unexpected(markers.error());
        cache_.fill_markers(owner, missing.generation, std::move(*markers));
      }
      if (missing.paused) {
        auto r = pg::exec(c, "SELECT workflow FROM celos_paused");
        if (!r) return tl::unexpected(r.error());
        std::set<std::string> paused;
        for (int i = 0; i < PQntuples(r->get()); ++i) {
          paused.insert(pg::field(r->get(), i, 0).value_or(""));
        }
        cache_.fill_paused(owner, missing.generation, std::move(paused));
      }
      return {};
    });
  }

  // Every rerun marker with its slot's stored status (for the expiry rule).
  static Result<std::vector<SlotCache::Marker>> read_markers(PGconn* c) {
    auto r = pg::exec(c,
                      "SELECT r.workflow, (extract(epoch FROM r.slot_time) * 1000)::bigint, "
                      "(extract(epoch FROM r.rerun_time) * 1000)::bigint, s.status "
                      "FROM celos_reruns r LEFT JOIN celos_slots s "
                      "ON s.workflow = r.workflow AND s.slot_time = r.slot_time");
    if (!r) return tl::unexpected(r.error());
    std::vector<SlotCache::Marker> out;
    for (int i = 0; i < PQntuples(r->get()); ++i) {
      auto t = time_from_ms(pg::field(r->get(), i, 1));
      auto marked = time_from_ms(pg::field(r->get(), i, 2));
      if (!t) return tl::unexpected(t.error());
      if (!marked) return tl::unexpected(marked.error());
      SlotCache::Marker m{SlotId{pg::field(r->get(), i, 0).value_or(""), *t}, *marked, {}};
      if (auto status = pg::field(r->get(), i, 3)) {
        auto parsed = parse_slot_status(*status);
        if (!parsed) return tl::unexpected(parsed.error());
        m.status = *parsed;
      }
      out.push_back(std::move(m));
    }
    return out;
  }

  Result<bool> is_paused(std::string_view workflow) override {
    if (auto cached = cache_.paused(cache_owner(), workflow)) return *cached;
    return with_conn([&](PGconn* c) -> Result<bool> {
      auto r =
          pg::exec(c, "SELECT 1 FROM celos_paused WHERE workflow = $1", {std::string(workflow)});
      if (!r) return tl::unexpected(r.error());
      return PQntuples(r->get()) > 0;
    });
  }

  Result<Maintenance> maintenance() override {
    return with_conn([](PGconn* c) -> Result<Maintenance> {
      auto r = pg::exec(c, "SELECT record FROM celos_maintenance WHERE id = 1");
      if (!r) return tl::unexpected(r.error());
      if (PQntuples(r->get()) == 0) return Maintenance{};
      auto record = pg::field(r->get(), 0, 0);
      if (!record) return Maintenance{};
      return maintenance_from_json(*record);
    });
  }

  Result<void> set_maintenance(const Maintenance& maintenance) override {
    return write([&](PGconn* c) -> Result<void> {
      auto r = pg::exec(c,
                        "INSERT INTO celos_maintenance (id, record) VALUES (1, $1) "
                        "ON CONFLICT (id) DO UPDATE SET record = excluded.record",
                        {maintenance_to_json(maintenance)});
      if (!r) return tl::unexpected(r.error());
      return {};
    });
  }

  Result<void> set_paused(std::string_view workflow, bool paused) override {
    return write(
        [&](PGconn* c) -> Result<void> {
          auto r = paused ? pg::exec(c,
                                     "INSERT INTO celos_paused (workflow) VALUES ($1) "
                                     "ON CONFLICT DO NOTHING",
                                     {std::string(workflow)})
                          : pg::exec(c, "DELETE FROM celos_paused WHERE workflow = $1",
                                     {std::string(workflow)});
          if (!r) return tl::unexpected(r.error());
          return {};
        },
        [&] { cache_.set_paused(workflow, paused); });
  }

  Result<void> append_history(const std::vector<SlotHistoryEntry>& entries) override {
    if (entries.empty()) return {};
    return write([&](PGconn* c) { return insert_history_rows(c, entries); });
  }

  Result<std::vector<SlotHistoryEntry>> slot_history(const SlotId& id) override {
    return with_conn([&](PGconn* c) -> Result<std::vector<SlotHistoryEntry>> {
      auto r = pg::exec(c,
                        "SELECT entry FROM celos_history WHERE workflow = $1 AND slot_time = $2 "
                        "ORDER BY id",
                        {id.workflow, format_time(id.time)});
      if (!r) return tl::unexpected(r.error());
      std::vector<SlotHistoryEntry> out;
      for (int i = 0; i < PQntuples(r->get()); ++i) {
        auto e = history_entry_from_json(id.workflow, pg::field(r->get(), i, 0).value_or(""));
        if (!e) {
          return fail(
              fmt::format("corrupt history row of {}: {}", to_string(id), e.error().message),
              ErrorCode::kCorrupt);
        }
        out.push_back(std::move(*e));
      }
      return out;
    });
  }

  Result<std::size_t> prune_history(Time before) override {
    return with_conn([&](PGconn* c) { return delete_old_history_rows(c, before); });
  }

  Result<void> mark_reruns(const std::vector<SlotId>& ids, Time now) override {
    if (ids.empty()) return {};
    return write(
        [&](PGconn* c) -> Result<void> {
          std::vector<pg::Param> wf, time;
          for (const SlotId& id : ids) {
            wf.emplace_back(id.workflow);
            time.emplace_back(format_time(id.time));
          }
          auto r = pg::exec(c,
                            "INSERT INTO celos_reruns (workflow, slot_time, rerun_time) "
                            "SELECT w, t, $3 FROM unnest($1::text[], $2::timestamptz[]) AS u(w, t) "
                            "ON CONFLICT (workflow, slot_time) DO UPDATE SET rerun_time = "
                            "excluded.rerun_time",
                            {pg::array_literal(wf), pg::array_literal(time), format_time(now)});
          if (!r) return tl::unexpected(r.error());
          return {};
        },
        [this] { cache_.forget_reruns(); });
  }

  Result<void> announce_instance(std::string_view dataset, Time time, Time now) override {
    return announce_instances({{std::string(dataset), time}}, now);
  }

  // One statement in one transaction: one round trip and one commit (one WAL flush) for the
  // whole group.
  Result<void> announce_instances(const std::vector<Announcement>& announcements,
                                  Time now) override {
    if (announcements.empty()) return {};
    return write([&](PGconn* c) -> Result<void> {
      std::vector<pg::Param> datasets, times;
      for (const Announcement& a : announcements) {
        datasets.emplace_back(a.dataset);
        times.emplace_back(format_time(a.time));
      }
      // Idempotent: the first announcement's stamp stays (also for a time repeated in the group).
      auto r = pg::exec(c,
                        "INSERT INTO celos_announced (dataset, instance_time, announced) "
                        "SELECT d, t, $3 FROM unnest($1::text[], $2::timestamptz[]) AS u(d, t) "
                        "ON CONFLICT DO NOTHING",
                        {pg::array_literal(datasets), pg::array_literal(times), format_time(now)});
      if (!r) return tl::unexpected(r.error());
      return {};
    });
  }

  Result<std::vector<Time>> announced_instances(std::string_view dataset, Time start,
                                                Time end) override {
    return with_conn([&](PGconn* c) -> Result<std::vector<Time>> {
      std::vector<Time> out;
      if (end <= start) return out;
      auto r = pg::exec(c,
                        "SELECT (extract(epoch FROM instance_time) * 1000)::bigint "
                        "FROM celos_announced WHERE dataset = $1 AND instance_time >= $2 "
                        "AND instance_time < $3 ORDER BY instance_time",
                        {std::string(dataset), format_time(start), format_time(end)});
      if (!r) return tl::unexpected(r.error());
      for (int i = 0; i < PQntuples(r->get()); ++i) {
        auto t = time_from_ms(pg::field(r->get(), i, 0));
        if (!t) return tl::unexpected(t.error());
        out.push_back(*t);
      }
      return out;
    });
  }

  Result<std::vector<std::string>> backfill_records() override {
    return with_conn([&](PGconn* c) -> Result<std::vector<std::string>> {
      auto r = pg::exec(c, "SELECT record FROM celos_backfills ORDER BY id");
      if (!r) return tl::unexpected(r.error());
      std::vector<std::string> out;
      for (int i = 0; i < PQntuples(r->get()); ++i) {
        out.push_back(pg::field(r->get(), i, 0).value_or(""));
      }
      return out;
    });
  }

  Result<void> put_backfill_record(const std::string& id, const std::string& record) override {
    return write([&](PGconn* c) -> Result<void> {
      auto r = pg::exec(c,
                        "INSERT INTO celos_backfills (id, record) VALUES ($1, $2) "
                        "ON CONFLICT (id) DO UPDATE SET record = excluded.record",
                        {id, record});
      if (!r) return tl::unexpected(r.error());
      return {};
    });
  }

 private:
  // Runs `f` on a pooled connection (connecting and migrating first when needed).
  template <class F>
  auto with_conn(F f) -> decltype(f(static_cast<PGconn*>(nullptr))) {
    if (auto ok = ready(); !ok) return tl::unexpected(ok.error());
    auto conn = pool_.take();
    if (!conn) return tl::unexpected(conn.error());
    pg::PooledConn c(pool_, std::move(*conn));
    return f(c.get());
  }

  // Runs `f` in one transaction, fenced by the lease when this database is fenced; then
  // `committed` tells the cache. A write whose outcome is not known empties the cache.
  Result<void> write(
      const std::function<Result<void>(PGconn*)>& f, const std::function<void()>& committed = [] {})
      EXCLUDES(write_mutex_) {
    MutexLock lock(write_mutex_);  // the cache applies writes in commit order
    auto done = with_conn([&](PGconn* c) -> Result<void> {
      const auto holder = fence_ ? fence_->get() : std::nullopt;
      if (fence_ && !holder) {
        return fail("this node is not the cluster's leader: state writes are refused");
      }
      // BEGIN with a first, lock-free look at the lease: a node that lost it is refused before
      // it writes (and takes row locks the next leader would wait for).
      Result<void> written = run_fenced(c, "BEGIN", holder, false);
      if (!written) {
        (void)pg::exec(c, "ROLLBACK");
        return written;
      }
      written = f(c);
      if (written) written = run_fenced(c, "COMMIT", holder, true);
      if (!written) (void)pg::exec(c, "ROLLBACK");
      return written;
    });
    if (done) {
      committed();
    } else {
      cache_.clear();
    }
    return done;
  }

  // Whose cache it is: the leader's epoch, 0 for an unfenced database (one process), nothing
  // for a fenced node that does not lead (its reads go to the database).
  SlotCache::Owner cache_owner() const {
    if (!fence_) return 0;
    auto holder = fence_->get();
    if (!holder) return std::nullopt;
    return holder->epoch;
  }

  pg::Pool pool_;
  std::shared_ptr<const WriteFence> fence_;
  std::atomic<bool> migrated_{false};
  // Serializes the writes (and so the cache's updates, in commit order); it guards no field:
  // the cache locks itself.
  Mutex write_mutex_;
  SlotCache cache_;
};

}  // namespace

Result<std::unique_ptr<StateDatabase>> open_postgres_state_database(
    const std::string& uri, const StateDatabaseOptions& options) {
  auto db = std::make_unique<PostgresStateDatabase>(uri, options);
  if (auto ok = db->ready(); !ok) {
    if (!(options.connect_later && ok.error().code == ErrorCode::kFailed)) {
      return tl::unexpected(ok.error());
    }
    spdlog::warn("{} (retrying on use)", ok.error().message);
  }
  return std::unique_ptr<StateDatabase>(std::move(db));
}

}  // namespace celos
