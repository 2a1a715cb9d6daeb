// The cluster of SPEC §11: celos-server nodes sharing one PostgreSQL state database, one of them
// the leader. The leader holds a lease row in the database (expiry judged by the database's
// clock, a higher epoch for every new leader) and renews it with short transactions; it counts
// itself leader only until `renewal sent + lease - margin` on its own monotonic clock, so a
// leader whose database connection hangs stops stepping before its lease can expire. Every write
// of the state database is fenced by the epoch (celos::WriteFence, state_db.h).
//
// A single server with the file backend is a cluster of one: always leader, epoch 1.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "celos/clock.h"
#include "celos/error.h"
#include "celos/lease_guard.h"
#include "celos/mutex.h"
#include "celos/state_db.h"
#include "celos/time.h"
#include "celos/write_fence.h"

namespace celos {

enum class ClusterRole { kLeader, kStandby };
std::string_view to_string(ClusterRole role);  // "leader", "standby"

struct ClusterNodeInfo {
  std::string id;
  std::string url;
  ClusterRole role = ClusterRole::kStandby;
  Time last_seen{};
};

struct ClusterLeaderInfo {
  std::string id;
  std::string url;
  std::int64_t epoch = 0;
  Time since{};
};

// GET /api/v1/cluster.
struct ClusterView {
  std::string name;
  ClusterNodeInfo self;
  std::optional<ClusterLeaderInfo> leader;
  std::vector<ClusterNodeInfo> nodes;  // seen within 10 lease periods
};

// A Cluster is the LeaseGuard of its node's side effects (celos/lease_guard.h): the
// PostgreSQL cluster confirms with one query that the lease row still names this node, its
// epoch and an expiry beyond now() + the margin (by the database's clock); the cluster of one
// is always current.
class Cluster : public LeaseGuard {
 public:
  virtual ~Cluster() = default;
  virtual const std::string& node_id() const = 0;
  // True while this node holds the lease with time to spare: only then may it step.
  virtual bool is_leader() const = 0;
  // The leader's advertised URL as last seen, unless this node is the leader or the lease
  // names this node (a lease from before a restart, or one it can no longer renew).
  virtual std::optional<std::string> leader_url() const = 0;
  // The holder of the unexpired lease (id and URL; epoch and since may be 0): asked of the
  // database (may block: not on an HTTP thread), else as last seen. Nothing when no node holds it.
  [[nodiscard]] virtual std::optional<ClusterLeaderInfo> lease_holder() const = 0;
  // The secret that authenticates one node's forwarded request to another (issue 33), kept in
  // the state database and read once; nothing until read, and always nothing for a cluster of
  // one (there, every X-Celos-Forwarded is forged).
  virtual std::optional<std::string> forward_secret() const = 0;
  [[nodiscard]] virtual Result<ClusterView> view() = 0;
  // Gives up the lease and does not campaign for `hold`; returns until when. kInvalid when
  // there is no lease to give up (the file backend: HTTP 409).
  [[nodiscard]] virtual Result<Time> step_down(std::chrono::seconds hold) = 0;
  // The database's clock minus this node's, as last measured (the lease renewal asks the
  // database's time each lease/3); nothing before the first measurement or without a database.
  virtual std::optional<std::chrono::milliseconds> clock_skew() const { return std::nullopt; }
};

// Skew beyond this is warned about (log, /health/ready's "clock" check, celos_clock_skew_seconds):
// a node steps at its own clock, the lease is judged by the database's.
inline constexpr std::chrono::milliseconds kClockSkewWarning{2000};

struct ClusterOptions {
  std::string name = "celos";
  std::string node_id;
  std::string url;  // advertised
  std::chrono::seconds lease{10};
  // The renewals' schedule and the lease's local deadline (monotonic), view()'s times (now).
  Clock* clock = &system_clock();
};

// The file backend's cluster of one.
std::unique_ptr<Cluster> make_single_node_cluster(ClusterOptions options);

// A node of the PostgreSQL cluster at `uri`: campaigns and renews on its own thread (every
// lease/3) and keeps `fence` set to its lease while it leads (cleared otherwise). The first
// campaign runs before this returns, so a lone node leads at once.
std::unique_ptr<Cluster> make_postgres_cluster(std::string uri, ClusterOptions options,
                                               std::shared_ptr<WriteFence> fence);

// Runs `task` every `interval` on its own thread until destroyed (a standby's reload of the
// workflow files, SPEC §16).
class PeriodicTask {
 public:
  PeriodicTask(std::chrono::milliseconds interval, std::function<void()> task,
               Clock& clock = system_clock());
  ~PeriodicTask();
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

 private:
  void loop() EXCLUDES(mutex_);

  std::chrono::milliseconds interval_;
  std::function<void()> task_;
  Clock& clock_;
  Mutex mutex_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace celos
