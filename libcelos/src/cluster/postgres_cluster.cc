// A node of the PostgreSQL cluster (celos/cluster.h). The lease is one row per cluster name:
// taken with an INSERT … ON CONFLICT DO UPDATE … WHERE expires <= now() (the database's clock,
// never ours), renewed with an UPDATE that requires holder, epoch and an unexpired lease. No
// session state is relied upon (no advisory locks), so it works through a connection pooler.
#include <atomic>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/cluster.h"
#include "celos/mutex.h"
#include "celos/write_fence.h"
#include "cluster/lease_confirmation.h"
#include "io/pg.h"
#include "io/postgres/postgres.h"

namespace celos {
namespace {

Time ms_time(const std::optional<std::string>& text) {
  return Time{std::chrono::milliseconds(text ? std::stoll(*text) : 0)};
}

class PostgresCluster final : public Cluster {
 public:
  PostgresCluster(std::string uri, ClusterOptions options, std::shared_ptr<WriteFence> fence)
      : uri_(std::move(uri)),
        options_(std::move(options)),
        clock_(*options_.clock),
        fence_(std::move(fence)),
        reads_(uri_, pg::SessionLimits{lease_ms()}) {
    tick();
    thread_ = std::thread([this] { loop(); });
  }

  ~PostgresCluster() override {
    {
      MutexLock lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
    if (leading()) (void)release(std::chrono::seconds(0));  // a clean stop hands over at once
  }

  const std::string& node_id() const override { return options_.node_id; }

  std::optional<std::chrono::milliseconds> clock_skew() const override {
    MutexLock lock(mutex_);
    return skew_;
  }

  bool is_leader() const override {
    MutexLock lock(mutex_);
    return leading_ && clock_.monotonic() < valid_until_;
  }

  bool leading() const EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return leading_;
  }

  std::optional<std::string> leader_url() const override {
    if (is_leader()) return std::nullopt;
    auto holder = lease_holder();
    if (!holder || holder->id == options_.node_id || holder->url.empty()) return std::nullopt;
    return holder->url;
  }

  // Asked of the database each time (a mutation to forward is rare; a stale URL after a
  // takeover is not); the last tick's answer when the database cannot be asked.
  std::optional<ClusterLeaderInfo> lease_holder() const override {
    auto fresh = current_holder();
    MutexLock lock(mutex_);
    if (fresh) holder_ = *fresh;
    if (holder_.id.empty()) return std::nullopt;
    return holder_;
  }

  std::optional<std::string> forward_secret() const override {
    MutexLock lock(mutex_);
    if (secret_.empty()) return std::nullopt;
    return secret_;
  }

  Result<ClusterView> view() override;

  // Before a side effect (celos/lease_guard.h): the local deadline first (free), then the
  // database (cluster/lease_confirmation.h).
  Result<void> confirm() override {
    if (!is_leader()) {
      return fail(fmt::format("node {} is not the leader of cluster {} any more", options_.node_id,
                              options_.name),
                  ErrorCode::kUnavailable);
    }
    return confirmation_.confirm();
  }
  Result<Time> step_down(std::chrono::seconds hold) override {
    if (!is_leader()) return fail("this node is not the cluster's leader", ErrorCode::kInvalid);
    if (auto released = release(hold); !released) return tl::unexpected(released.error());
    return clock_.now() + std::chrono::duration_cast<std::chrono::milliseconds>(hold);
  }

 private:
  std::chrono::milliseconds lease_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(options_.lease);
  }
  // A leader counts itself leader until `renewal sent + lease - margin`.
  std::chrono::milliseconds margin() const {
    return std::max(std::chrono::milliseconds(1000), lease_ms() / 5);
  }

  void loop() EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    while (true) {
      const auto deadline = clock_.monotonic() + lease_ms() / 3;
      while (!stopping_ && clock_.wait_until(wake_, mutex_, deadline)) {
      }
      if (stopping_) return;
      lock.unlock();
      tick();
      lock.lock();
    }
  }

  // One round: renew or campaign, then heartbeat and learn the leader's URL.
  void tick() {
    if (!conn_) {
      auto c = pg::connect(uri_, pg::SessionLimits{lease_ms()});
      if (!c) {
        spdlog::warn("cluster: {}", c.error().message);
        return;
      }
      conn_ = std::move(*c);
      // The lease table comes with the schema (nodes may start before anything else used it).
      if (auto migrated = migrate_schema(conn_.get()); !migrated) {
        spdlog::warn("cluster: {}", migrated.error().message);
        conn_.reset();
        return;
      }
      // Short transactions with a deadline: a stuck statement must not outlive the lease.
      (void)pg::exec(conn_.get(),
                     fmt::format("SET statement_timeout = {}", lease_ms().count() / 3));
    }
    const auto sent = clock_.monotonic();
    Result<void> done = leading() ? renew(sent) : campaign(sent);
    if (done) done = heartbeat();
    if (done && forward_secret() == std::nullopt) done = read_secret();
    if (!done) {
      spdlog::warn("cluster: {}", done.error().message);
      if (PQstatus(conn_.get()) != CONNECTION_OK) conn_.reset();
    }
  }

  Result<void> renew(Clock::Monotonic sent) EXCLUDES(mutex_) {
    const std::int64_t epoch = [&] {
      MutexLock lock(mutex_);
      return epoch_;
    }();
    auto r = pg::exec(conn_.get(),
                      "UPDATE celos_lease SET expires = now() + $4 * interval '1 millisecond' "
                      "WHERE cluster = $1 AND holder = $2 AND epoch = $3 AND expires > now() "
                      "RETURNING epoch",
                      {options_.name, options_.node_id, std::to_string(epoch),
                       std::to_string(lease_ms().count())});
    if (!r) return tl::unexpected(r.error());
    MutexLock lock(mutex_);
    if (PQntuples(r->get()) == 1) {
      valid_until_ = sent + lease_ms() - margin();
      return {};
    }
    spdlog::warn("cluster: lost the lease (epoch {}); standing by", epoch_);
    leading_ = false;
    fence_->set(std::nullopt);
    return {};
  }

  Result<void> campaign(Clock::Monotonic sent) EXCLUDES(mutex_) {
    {
      MutexLock lock(mutex_);
      if (sent < hold_until_) return {};
    }
    auto r = pg::exec(
        conn_.get(),
        "INSERT INTO celos_lease AS l (cluster, holder, url, epoch, since, expires) "
        "VALUES ($1, $2, $3, 1, now(), now() + $4 * interval '1 millisecond') "
        "ON CONFLICT (cluster) DO UPDATE SET holder = excluded.holder, url = excluded.url, "
        "epoch = l.epoch + 1, since = now(), expires = excluded.expires "
        "WHERE l.expires <= now() RETURNING epoch",
        {options_.name, options_.node_id, options_.url, std::to_string(lease_ms().count())});
    if (!r) return tl::unexpected(r.error());
    if (PQntuples(r->get()) != 1) return {};
    MutexLock lock(mutex_);
    epoch_ = std::stoll(pg::field(r->get(), 0, 0).value_or("0"));
    leading_ = true;
    valid_until_ = sent + lease_ms() - margin();
    fence_->set(WriteFence::Holder{options_.name, options_.node_id, epoch_});
    spdlog::info("cluster {}: {} is the leader now (epoch {})", options_.name, options_.node_id,
                 epoch_);
    return {};
  }

  Result<void> heartbeat() {
    const bool leader = is_leader();
    auto r =
        pg::exec(conn_.get(),
                 "INSERT INTO celos_nodes (cluster, id, url, role, last_seen) "
                 "VALUES ($1, $2, $3, $4, now()) ON CONFLICT (cluster, id) DO UPDATE SET "
                 "url = excluded.url, role = excluded.role, last_seen = now()",
                 {options_.name, options_.node_id, options_.url,
                  std::string(to_string(leader ? ClusterRole::kLeader : ClusterRole::kStandby))});
    if (!r) return tl::unexpected(r.error());
    const Time asked = clock_.now();
    r = pg::exec(conn_.get(),
                 "SELECT (SELECT holder FROM celos_lease WHERE cluster = $1 "
                 "AND holder IS NOT NULL AND expires > now()), "
                 "(SELECT url FROM celos_lease WHERE cluster = $1 AND holder IS NOT NULL "
                 "AND expires > now()), (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
                 {options_.name});
    if (!r) return tl::unexpected(r.error());
    measure_skew(asked, clock_.now(), ms_time(pg::field(r->get(), 0, 2)));
    MutexLock lock(mutex_);
    holder_ = ClusterLeaderInfo{
        pg::field(r->get(), 0, 0).value_or(""), pg::field(r->get(), 0, 1).value_or(""), 0, {}};
    return {};
  }

  // The database's clock read between `asked` and `answered` (ours): the skew is its distance
  // from the middle, known to within half the round trip. Warned about once per excursion.
  void measure_skew(Time asked, Time answered, Time database) {
    const auto round_trip = answered - asked;
    if (round_trip > std::chrono::milliseconds(1000)) return;  // too slow to tell
    const auto skew = database - (asked + round_trip / 2);
    const bool skewed = std::chrono::abs(skew) - round_trip / 2 > kClockSkewWarning;
    MutexLock lock(mutex_);
    if (skewed && !skew_warned_) {
      spdlog::warn(
          "cluster: this node's clock is {:.1f} s {} the database's (more than {} s): "
          "it steps at its own clock; fix its time synchronization",
          std::abs(skew.count()) / 1000.0, skew.count() > 0 ? "behind" : "ahead of",
          kClockSkewWarning.count() / 1000);
    }
    skew_warned_ = skewed;
    skew_ = skew;
  }

  // The unexpired lease's holder and URL (an empty id: none).
  Result<ClusterLeaderInfo> read_holder(PGconn* conn) const {
    auto r = pg::exec(conn,
                      "SELECT holder, url FROM celos_lease WHERE cluster = $1 "
                      "AND holder IS NOT NULL AND expires > now()",
                      {options_.name});
    if (!r) return tl::unexpected(r.error());
    ClusterLeaderInfo holder;
    if (PQntuples(r->get()) == 1) {
      holder.id = pg::field(r->get(), 0, 0).value_or("");
      holder.url = pg::field(r->get(), 0, 1).value_or("");
    }
    return holder;
  }

  Result<ClusterLeaderInfo> current_holder() const {
    auto conn = reads_.take();
    if (!conn) return tl::unexpected(conn.error());
    pg::PooledConn c(reads_, std::move(*conn));
    return read_holder(c.get());
  }

  // The cluster's forwarding secret: the first node to ask creates it (random, from the
  // database's generator), every node reads the same one.
  Result<void> read_secret() {
    auto r = pg::exec(conn_.get(),
                      "INSERT INTO celos_cluster_secret (cluster, secret) VALUES ($1, "
                      "replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')) "
                      "ON CONFLICT (cluster) DO NOTHING",
                      {options_.name});
    if (r) {
      r = pg::exec(conn_.get(), "SELECT secret FROM celos_cluster_secret WHERE cluster = $1",
                   {options_.name});
    }
    if (!r) return tl::unexpected(r.error());
    if (PQntuples(r->get()) != 1) return {};
    MutexLock lock(mutex_);
    secret_ = pg::field(r->get(), 0, 0).value_or("");
    return {};
  }

  // Gives the lease up (on a connection of its own: the ticking thread may be busy).
  Result<void> release(std::chrono::seconds hold) {
    std::int64_t epoch;
    {
      MutexLock lock(mutex_);
      epoch = epoch_;
      leading_ = false;
      fence_->set(std::nullopt);
      hold_until_ = clock_.monotonic() + hold;
    }
    auto conn = reads_.take();
    if (!conn) return tl::unexpected(conn.error());
    pg::PooledConn c(reads_, std::move(*conn));
    auto r = pg::exec(c.get(),
                      "UPDATE celos_lease SET holder = NULL, url = NULL, expires = now() "
                      "WHERE cluster = $1 AND holder = $2 AND epoch = $3",
                      {options_.name, options_.node_id, std::to_string(epoch)});
    if (!r) return tl::unexpected(r.error());
    spdlog::info("cluster {}: {} stepped down (epoch {}); not campaigning for {} s", options_.name,
                 options_.node_id, epoch, hold.count());
    return {};
  }

  const std::string uri_;
  const ClusterOptions options_;
  Clock& clock_;
  std::shared_ptr<WriteFence> fence_;
  mutable pg::Pool reads_;
  pg::Conn conn_;  // the ticking thread's
  LeaseConfirmation confirmation_{reads_, fence_, margin(), clock_};

  mutable Mutex mutex_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  bool leading_ GUARDED_BY(mutex_) = false;
  std::int64_t epoch_ GUARDED_BY(mutex_) = 0;
  Clock::Monotonic valid_until_ GUARDED_BY(mutex_){};
  Clock::Monotonic hold_until_ GUARDED_BY(mutex_){};
  mutable ClusterLeaderInfo holder_ GUARDED_BY(mutex_);  // as last seen (an empty id: none)
  std::string secret_ GUARDED_BY(mutex_);                // the forwarding secret, once read
  std::optional<std::chrono::milliseconds> skew_ GUARDED_BY(mutex_);
  bool skew_warned_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

Result<ClusterView> PostgresCluster::view() {
  auto conn = reads_.take();
  if (!conn) return tl::unexpected(conn.error());
  pg::PooledConn c(reads_, std::move(*conn));
  auto lease = pg::exec(c.get(),
                        "SELECT holder, url, epoch, (extract(epoch FROM since) * 1000)::bigint "
                        "FROM celos_lease WHERE cluster = $1 AND holder IS NOT NULL "
                        "AND expires > now()",
                        {options_.name});
  if (!lease) return tl::unexpected(lease.error());
  ClusterView v;
  v.name = options_.name;
  std::string holder;
  if (PQntuples(lease->get()) == 1) {
    holder = pg::field(lease->get(), 0, 0).value_or("");
    v.leader = ClusterLeaderInfo{holder, pg::field(lease->get(), 0, 1).value_or(""),
                                 std::stoll(pg::field(lease->get(), 0, 2).value_or("0")),
                                 ms_time(pg::field(lease->get(), 0, 3))};
  }
  auto nodes = pg::exec(c.get(),
                        "SELECT id, url, (extract(epoch FROM last_seen) * 1000)::bigint "
                        "FROM celos_nodes WHERE cluster = $1 AND last_seen > now() - $2 * "
                        "interval '1 millisecond' ORDER BY id",
                        {options_.name, std::to_string(10 * lease_ms().count())});
  if (!nodes) return tl::unexpected(nodes.error());
  for (int i = 0; i < PQntuples(nodes->get()); ++i) {
    ClusterNodeInfo n{pg::field(nodes->get(), i, 0).value_or(""),
                      pg::field(nodes->get(), i, 1).value_or(""), ClusterRole::kStandby,
                      ms_time(pg::field(nodes->get(), i, 2))};
    if (n.id == holder) n.role = ClusterRole::kLeader;
    v.nodes.push_back(std::move(n));
  }
  v.self = {options_.node_id, options_.url,
            is_leader() ? ClusterRole::kLeader : ClusterRole::kStandby, clock_.now()};
  return v;
}

}  // namespace

std::unique_ptr<Cluster> make_postgres_cluster(std::string uri, ClusterOptions options,
                                               std::shared_ptr<WriteFence> fence) {
  return std::make_unique<PostgresCluster>(std::move(uri), std::move(options), std::move(fence));
}

}  // namespace celos
