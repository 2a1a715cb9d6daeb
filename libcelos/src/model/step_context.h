// The shared, thread-safe parts of one scheduler step (SPEC §10): the trigger context whose
// answers are cached for the step, the per-endpoint fail-fast gate, and the call statistics of
// the step's summary line. Tasks of the step's Executor use them concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "celos/clock.h"
#include "celos/file_system.h"
#include "celos/lease_guard.h"
#include "celos/mutex.h"
#include "celos/state_db.h"
#include "celos/trigger.h"
#include "model/data_checks.h"
#include "model/dataset_step.h"

namespace celos::detail {

// Answers are cached so that a path is checked once per step however many triggers refer to
// it (a concurrent second asker waits for the first answer), and a file system that could not
// be reached is not asked again in the same step (HDFS down: fail fast). Paths that share a
// directory are answered by one listing of it where plan_listings() said so (model/data_checks.h).
class StepTriggerContext final : public TriggerContext {
 public:
  // `memory` (may be null): the directories too big to list, across steps.
  StepTriggerContext(Time now, StateDatabase& db, FileSystemResolver& file_systems,
                     DataCheckMemory* memory = nullptr)
      : now_(now), db_(db), file_systems_(file_systems), listings_(now, memory) {}

  Time now() const override { return now_; }
  Result<bool> path_exists(const std::string& fs_uri, const std::string& path) override;
  Result<bool> slot_succeeded(const std::string& workflow_id, Time time) override;

  // Datasets: answered from the state database (model/dataset_step.h), no file system call.
  Result<SlotStatus> slot_status(const std::string& w, Time t) override;
  Result<std::vector<SlotState>> stored_slots(const std::string& w, Time s, Time e) override;
  Result<bool> instance_announced(const std::string& d, Time t) override;
  Result<std::vector<Time>> announced_instances(const std::string& d, Time s, Time e) override;

  // The paths the step's triggers will ask (a probe's): call before the concurrent asks.
  void plan_listings(const std::vector<PathKey>& paths) { listings_.plan(paths); }

  // One task per directory plan_listings() chose, listing it. The step runs them before the
  // triggers' own asks: 23 slots of one workflow that wait for their directory's listing then
  // find it done instead of each holding one of --io-concurrency's threads while it runs. A
  // file system found unreachable is not asked again (as path_exists).
  std::vector<std::function<void()>> listing_tasks();

  // Is `fs_uri`'s file system one where each check is a round trip (it prefers_listing():
  // WebHDFS, SFTP)? Its paths are listed by directory, and its checks back off. Cached.
  bool remote(const std::string& fs_uri) EXCLUDES(mutex_);

  int checks() const { return checks_.load(); }    // distinct paths answered
  int calls() const { return listings_.calls(); }  // file-system calls they took

 private:
  void prefetch_listing(const std::string& fs_uri, const std::string& dir) EXCLUDES(mutex_);

  template <class Key>
  using Cache = std::map<Key, std::shared_future<Result<bool>>>;
  // `cache` names one of the caches below (a member pointer: the map is only touched under
  // mutex_, which a reference passed in would hide from the analysis).
  template <class Key, class Compute>
  Result<bool> once(Cache<Key> StepTriggerContext::*cache, const Key& key, Compute&& compute)
      EXCLUDES(mutex_);

  Time now_;
  StateDatabase& db_;
  FileSystemResolver& file_systems_;
  DirectoryListings listings_;
  Mutex mutex_;
  Cache<std::pair<std::string, std::string>> exists_ GUARDED_BY(mutex_);
  Cache<std::pair<std::string, Time>> succeeded_ GUARDED_BY(mutex_);
  std::map<std::string, Error> down_ GUARDED_BY(mutex_);
  std::map<std::string, bool> remote_ GUARDED_BY(mutex_);
  std::atomic<int> checks_{0};
  Mutex datasets_mutex_;  // DatasetLookups caches without a lock of its own
  DatasetLookups datasets_ GUARDED_BY(datasets_mutex_){db_};
};

// The step's fence of side effects (celos/lease_guard.h), asked right before outputs are
// removed, done flags written and jobs submitted or started. The first failure means the lease
// is lost for this step: it is logged once, and every later confirm fails without asking, so
// that the step stops and leaves the state as it is for the new leader. Thread-safe.
class SideEffectFence final : public LeaseGuard {
 public:
  explicit SideEffectFence(LeaseGuard& guard) : guard_(guard) {}
  [[nodiscard]] Result<void> confirm() override;
  bool lost() const { return lost_.load(); }
  // Why the lease was lost ("" while it was not).
  std::string why() const;

 private:
  LeaseGuard& guard_;
  std::atomic<bool> lost_{false};
  mutable Mutex mutex_;
  std::string why_ GUARDED_BY(mutex_);
};

// How long one stage of the step's pipeline (step.cc) was busy: per round, from the start of
// its first task to the end of its last, the rounds added up. Tasks run on the executor's
// threads; rounds end on the step's thread between batches.
class StageClock {
 public:
  explicit StageClock(Clock& clock) : clock_(clock) {}

  template <class Task>
  std::function<void()> timed(Task task) {
    return [this, task = std::move(task)]() mutable {
      const auto started = clock_.monotonic();
      task();
      add(started, clock_.monotonic());
    };
  }

  void end_round() {
    MutexLock lock(mutex_);
    if (any_) busy_ += last_ - first_;
    any_ = false;
  }

  std::chrono::milliseconds busy() const {
    MutexLock lock(mutex_);
    return std::chrono::duration_cast<std::chrono::milliseconds>(busy_);
  }

 private:
  void add(Clock::Monotonic started, Clock::Monotonic ended) {
    MutexLock lock(mutex_);
    if (!any_ || started < first_) first_ = started;
    if (!any_ || ended > last_) last_ = ended;
    any_ = true;
  }

  Clock& clock_;
  mutable Mutex mutex_;
  bool any_ GUARDED_BY(mutex_) = false;
  Clock::Monotonic first_ GUARDED_BY(mutex_), last_ GUARDED_BY(mutex_);
  Clock::Monotonic::duration busy_ GUARDED_BY(mutex_){0};
};

// Counts the step's external calls, their failures and the slowest one, and fails calls to an
// endpoint at once after its first timeout or connection error in the step (SPEC §16).
class CallGate {
 public:
  explicit CallGate(Clock& clock) : clock_(clock) {}

  // Runs `call` (returning a Result) unless `endpoint` already failed in this step; records
  // its duration and outcome. An empty endpoint is never gated.
  template <class Call>
  auto run(const std::string& endpoint, const std::string& what, Call&& call) -> decltype(call()) {
    if (auto down = down_error(endpoint)) {
      return tl::unexpected(Error{fmt_skipped(endpoint, *down), ErrorCode::kUnavailable});
    }
    const auto started = clock_.monotonic();
    auto result = call();
    record(endpoint, what, clock_.monotonic() - started, result ? nullptr : &result.error());
    return result;
  }

  int calls() const { return calls_.load(); }
  int failures() const { return failures_.load(); }
  // "12 ms (Oozie status of ...)" or "" when no call was made.
  std::string slowest() const;

 private:
  std::optional<std::string> down_error(const std::string& endpoint);
  static std::string fmt_skipped(const std::string& endpoint, const std::string& why);
  void record(const std::string& endpoint, const std::string& what,
              std::chrono::steady_clock::duration took, const Error* error);

  Clock& clock_;
  mutable Mutex mutex_;
  std::map<std::string, std::string> down_ GUARDED_BY(mutex_);
  std::chrono::steady_clock::duration slowest_ GUARDED_BY(mutex_){0};
  std::string slowest_what_ GUARDED_BY(mutex_);
  std::atomic<int> calls_{0};
  std::atomic<int> failures_{0};
};

}  // namespace celos::detail
