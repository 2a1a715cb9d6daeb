// A single server with the file backend: its own leader, epoch 1, since it started.
#include <chrono>

#include "celos/cluster.h"

namespace celos {

std::string_view to_string(ClusterRole role) {
  return role == ClusterRole::kLeader ? "leader" : "standby";
}

namespace {

class SingleNodeCluster final : public Cluster {
 public:
  explicit SingleNodeCluster(ClusterOptions options)
      : options_(std::move(options)), since_(options_.clock->now()) {}
  const std::string& node_id() const override { return options_.node_id; }
  bool is_leader() const override { return true; }
  std::optional<std::string> leader_url() const override { return std::nullopt; }
  std::optional<ClusterLeaderInfo> lease_holder() const override {
    return ClusterLeaderInfo{options_.node_id, options_.url, 1, since_};
  }
  std::optional<std::string> forward_secret() const override { return std::nullopt; }
  Result<void> confirm() override { return {}; }  // holds its directory's lock for life

  Result<ClusterView> view() override {
    ClusterView v;
    v.name = options_.name;
    v.self = {options_.node_id, options_.url, ClusterRole::kLeader, options_.clock->now()};
    v.leader = ClusterLeaderInfo{options_.node_id, options_.url, 1, since_};
    v.nodes = {v.self};
    return v;
  }

  Result<Time> step_down(std::chrono::seconds) override {
    return fail(
        "a server with the file state database is a cluster of one: there is no lease "
        "to give up (use --state-db postgresql://… for a cluster)",
        ErrorCode::kInvalid);
  }

 private:
  ClusterOptions options_;
  Time since_;
};

}  // namespace

PeriodicTask::PeriodicTask(std::chrono::milliseconds interval, std::function<void()> task,
                           Clock& clock)
    : interval_(interval), task_(std::move(task)), clock_(clock), thread_([this] { loop(); }) {}

void PeriodicTask::loop() {
  MutexLock lock(mutex_);
  while (true) {
    const auto deadline = clock_.monotonic() + interval_;
    while (!stopping_ && clock_.wait_until(wake_, mutex_, deadline)) {
    }
    if (stopping_) return;
    lock.unlock();
    task_();
    lock.lock();
  }
}

PeriodicTask::~PeriodicTask() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::unique_ptr<Cluster> make_single_node_cluster(ClusterOptions options) {
  return std::make_unique<SingleNodeCluster>(std::move(options));
}

}  // namespace celos
