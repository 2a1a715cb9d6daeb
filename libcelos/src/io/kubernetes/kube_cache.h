// The celos Jobs and Pending pods of one namespace as two watches (kube_watch.h) keep them, so
// that a status step answers from memory instead of listing 10,000 Jobs (issue 30).
//
// JobCache is the state alone (events in, answers out; no threads, no lock): per Job only what
// a status needs (uid, suspended, active pods not ready, its ExternalStatus), per Pending pod its
// Job and why it waits. It also keeps what celos itself did that the watch may not have shown
// yet: a Job celos created (by uid: an older Job of the same name may still be in the cache) or
// resumed. A Job with such a change not yet seen, and a Job missing from the cache, are not
// answered from it: the service asks the API server for them directly (a GET; 404 means the
// Job was deleted behind celos's back). So a Job celos has just created is never reported lost,
// and one deleted at the server fails its slot at the first step after its DELETED event.
//
// NamespaceCache is a JobCache under a Mutex with the two watches that feed it; it answers only
// while both are live (listed, streams open), else the service lists as without a cache.
// Services with the same API server and credentials share one per namespace
// (shared_namespace_cache). Private to io/kubernetes/.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/json.hpp>

#include "celos/clock.h"
#include "celos/external_service.h"
#include "celos/mutex.h"
#include "io/kubernetes/kube_api.h"
#include "io/kubernetes/kube_watch.h"

namespace celos::kube {

class JobCache {
 public:
  explicit JobCache(std::string ns) : ns_(std::move(ns)) {}

  void replace_jobs(const std::vector<boost::json::value>& jobs);
  void apply_job(std::string_view type, const boost::json::value& job);
  void replace_pods(const std::vector<boost::json::value>& pods);
  void apply_pod(std::string_view type, const boost::json::value& pod);

  // celos created Job `name` (its uid from the create's answer) / resumed it.
  void note_created(const std::string& name, const std::string& uid);
  void note_resumed(const std::string& name);
  // The API server said Job `name` does not exist: nothing of it is awaited any more.
  void forget(const std::string& name);

  // The status of Job `name` from the cache, or nullopt: ask the API server.
  std::optional<ExternalStatus> answer(const std::string& name);
  // Why a pod of Job `name` is Pending (Unschedulable ...), if one is.
  std::optional<std::string> pending_reason(const std::string& name);

  std::size_t jobs() const { return jobs_.size(); }
  std::size_t pods() const { return pods_.size(); }
  std::size_t awaited() const { return awaited_.size(); }

 private:
  struct Job {
    std::string uid;
    bool suspended = false;
    bool waits_for_pods = false;
    ExternalStatus status;
  };
  struct Pod {
    std::string job;
    std::optional<std::string> reason;
  };
  struct Awaited {  // a change of celos's the cache must show before it answers for the Job
    std::string uid;
    bool resumed = false;
  };
  static bool shows(const Job& job, const Awaited& awaited);
  void settle(const std::string& name);

  std::string ns_;
  std::unordered_map<std::string, Job> jobs_;
  std::unordered_map<std::string, Pod> pods_;
  std::unordered_map<std::string, Awaited> awaited_;
  std::unordered_map<std::string, std::string> reasons_;  // Job -> reason, rebuilt from pods_
  bool reasons_stale_ = true;
};

class NamespaceCache {
 public:
  // Starts the watches of `ns`'s celos Jobs and Pending pods.
  NamespaceCache(std::shared_ptr<KubeApi> api, const std::string& ns, Clock& clock);
  ~NamespaceCache();
  NamespaceCache(const NamespaceCache&) = delete;
  NamespaceCache& operator=(const NamespaceCache&) = delete;

  // When both watches are live: the status of each of `jobs` (external ids of this namespace)
  // the cache can give into `results`, the others into `ask`; true. False (nothing answered)
  // when a watch is not live.
  bool answer(const std::vector<const ExternalService::Job*>& jobs,
              std::map<std::string, Result<ExternalStatus>>& results,
              std::vector<const ExternalService::Job*>& ask) EXCLUDES(mutex_);
  std::optional<std::string> pending_reason(const std::string& name) EXCLUDES(mutex_);
  void note_created(const std::string& name, const std::string& uid) EXCLUDES(mutex_);
  void note_resumed(const std::string& name) EXCLUDES(mutex_);
  void forget(const std::string& name) EXCLUDES(mutex_);
  bool live() const;
  // Waits (on `clock`, at most `bound`) until both watches are live: a status step waits for a
  // cache it has just made rather than listing what the watches are listing. False when the
  // bound passed or a watch failed first.
  bool wait_live(Clock& clock, std::chrono::milliseconds bound) EXCLUDES(wait_mutex_);

 private:
  using Replace = void (JobCache::*)(const std::vector<boost::json::value>&);
  using Apply = void (JobCache::*)(std::string_view, const boost::json::value&);
  // A watch of `path` whose lists go to state_ through `replace` and its events through `apply`.
  std::unique_ptr<KubeWatch> feed(std::shared_ptr<KubeApi> api, std::string path, std::string query,
                                  Replace replace, Apply apply, Clock& clock);

  Mutex mutex_;
  JobCache state_ GUARDED_BY(mutex_);
  Mutex wait_mutex_;  // only for wait_live's timed waits (nobody notifies: it polls)
  CondVar wait_;
  // Last: destroyed (stopped) first, before the state their threads write.
  std::unique_ptr<KubeWatch> jobs_watch_, pods_watch_;
};

// The NamespaceCache of `key` (API server, credentials and namespace) that a service of this
// process already holds, else a new one from `make` (null `make`: null).
std::shared_ptr<NamespaceCache> shared_namespace_cache(
    const std::string& key, const std::function<std::shared_ptr<NamespaceCache>()>& make);

}  // namespace celos::kube
