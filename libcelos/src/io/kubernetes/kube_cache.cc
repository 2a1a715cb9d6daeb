// The watch-fed cache of a namespace's celos Jobs and Pending pods (kube_cache.h).
#include "io/kubernetes/kube_cache.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "io/kubernetes/kube_job.h"

namespace celos::kube {
namespace json = boost::json;

bool JobCache::shows(const Job& job, const Awaited& awaited) {
  return (awaited.uid.empty() || job.uid == awaited.uid) && (!awaited.resumed || !job.suspended);
}

// Forgets what celos awaited of Job `name` once the cache shows it.
void JobCache::settle(const std::string& name) {
  auto awaited = awaited_.find(name);
  if (awaited == awaited_.end()) return;
  auto job = jobs_.find(name);
  if (job != jobs_.end() && shows(job->second, awaited->second)) awaited_.erase(awaited);
}

void JobCache::replace_jobs(const std::vector<json::value>& jobs) {
  jobs_.clear();
  for (const json::value& job : jobs) apply_job("ADDED", job);
  for (auto it = awaited_.begin(); it != awaited_.end();) {
    auto job = jobs_.find(it->first);
    it = job != jobs_.end() && shows(job->second, it->second) ? awaited_.erase(it) : std::next(it);
  }
}

void JobCache::apply_job(std::string_view type, const json::value& job) {
  const std::string name = name_of(job);
  if (name.empty()) return;
  if (type == "DELETED") {
    jobs_.erase(name);
    // The Job celos created is gone: absent from the cache, it is asked for (404: lost).
    if (auto awaited = awaited_.find(name);
        awaited != awaited_.end() && awaited->second.uid == uid_of(job)) {
      awaited_.erase(awaited);
    }
    return;
  }
  jobs_[name] =
      Job{uid_of(job), is_suspended(job), waits_for_pods(job), job_status(job, ns_ + "/" + name)};
  settle(name);
}

void JobCache::replace_pods(const std::vector<json::value>& pods) {
  pods_.clear();
  for (const json::value& pod : pods) apply_pod("ADDED", pod);
  reasons_stale_ = true;
}

void JobCache::apply_pod(std::string_view type, const json::value& pod) {
  const std::string name = name_of(pod);
  if (name.empty()) return;
  reasons_stale_ = true;
  if (type == "DELETED") {  // deleted, or no longer Pending (it left the field selector)
    pods_.erase(name);
  } else {
    pods_[name] = Pod{job_of_pod(pod), kube::pending_reason(pod)};
  }
}

void JobCache::note_created(const std::string& name, const std::string& uid) {
  awaited_[name] = Awaited{uid, false};
  settle(name);
}

void JobCache::note_resumed(const std::string& name) {
  awaited_[name].resumed = true;
  settle(name);
}

void JobCache::forget(const std::string& name) { awaited_.erase(name); }

std::optional<ExternalStatus> JobCache::answer(const std::string& name) {
  settle(name);
  if (awaited_.count(name)) return std::nullopt;  // celos changed it; the cache shows it not yet
  auto job = jobs_.find(name);
  if (job == jobs_.end()) return std::nullopt;  // deleted, or created by another celos
  ExternalStatus status = job->second.status;
  if (status.state == JobState::kRunning && job->second.waits_for_pods) {
    if (auto why = pending_reason(name)) status.message = *why;
  }
  return status;
}

std::optional<std::string> JobCache::pending_reason(const std::string& name) {
  if (reasons_stale_) {
    reasons_.clear();
    for (const auto& [pod, info] : pods_) {
      if (info.reason) reasons_[info.job] = *info.reason;
    }
    reasons_stale_ = false;
  }
  auto found = reasons_.find(name);
  if (found == reasons_.end()) return std::nullopt;
  return found->second;
}

std::unique_ptr<KubeWatch> NamespaceCache::feed(std::shared_ptr<KubeApi> api, std::string path,
                                                std::string query, Replace replace, Apply apply,
                                                Clock& clock) {
  return std::make_unique<KubeWatch>(
      std::move(api), std::move(path), std::move(query),
      WatchHandlers{[this, replace](std::vector<json::value> items) {
                      MutexLock lock(mutex_);
                      (state_.*replace)(items);
                    },
                    [this, apply](std::string_view type, const json::value& object) {
                      MutexLock lock(mutex_);
                      (state_.*apply)(type, object);
                    }},
      clock);
}

NamespaceCache::NamespaceCache(std::shared_ptr<KubeApi> api, const std::string& ns, Clock& clock)
    : state_(ns) {
  const std::string selector = "labelSelector=" + url_encode(kWorkflowLabel);
  jobs_watch_ = feed(api, fmt::format("/apis/batch/v1/namespaces/{}/jobs", ns), selector,
                     &JobCache::replace_jobs, &JobCache::apply_job, clock);
  pods_watch_ = feed(api, fmt::format("/api/v1/namespaces/{}/pods", ns),
                     selector + "&fieldSelector=" + url_encode("status.phase=Pending"),
                     &JobCache::replace_pods, &JobCache::apply_pod, clock);
  jobs_watch_->start();
  pods_watch_->start();
}

NamespaceCache::~NamespaceCache() {
  jobs_watch_.reset();
  pods_watch_.reset();
}

bool NamespaceCache::live() const { return jobs_watch_->live() && pods_watch_->live(); }

bool NamespaceCache::wait_live(Clock& clock, std::chrono::milliseconds bound) {
  const auto deadline = clock.monotonic() + bound;
  MutexLock lock(wait_mutex_);
  while (!live()) {
    if (jobs_watch_->failing() || pods_watch_->failing() || clock.monotonic() >= deadline) {
      return false;
    }
    clock.wait_until(wait_, wait_mutex_,
                     std::min(deadline, clock.monotonic() + std::chrono::milliseconds(10)));
  }
  return true;
}

bool NamespaceCache::answer(const std::vector<const ExternalService::Job*>& jobs,
                            std::map<std::string, Result<ExternalStatus>>& results,
                            std::vector<const ExternalService::Job*>& ask) {
  if (!live()) return false;
  MutexLock lock(mutex_);
  for (const ExternalService::Job* job : jobs) {
    const std::string& id = job->external_id;
    if (auto status = state_.answer(id.substr(id.find('/') + 1))) {
      results[id] = std::move(*status);
    } else {
      ask.push_back(job);
    }
  }
  return true;
}

std::optional<std::string> NamespaceCache::pending_reason(const std::string& name) {
  MutexLock lock(mutex_);
  return state_.pending_reason(name);
}

void NamespaceCache::note_created(const std::string& name, const std::string& uid) {
  MutexLock lock(mutex_);
  state_.note_created(name, uid);
}

void NamespaceCache::note_resumed(const std::string& name) {
  MutexLock lock(mutex_);
  state_.note_resumed(name);
}

void NamespaceCache::forget(const std::string& name) {
  MutexLock lock(mutex_);
  state_.forget(name);
}

std::shared_ptr<NamespaceCache> shared_namespace_cache(
    const std::string& key, const std::function<std::shared_ptr<NamespaceCache>()>& make) {
  struct Registry {
    Mutex mutex;
    std::map<std::string, std::weak_ptr<NamespaceCache>> caches GUARDED_BY(mutex);
  };
  static Registry& registry = *new Registry;  // never destroyed: services may outlive main()
  MutexLock lock(registry.mutex);
  for (auto it = registry.caches.begin(); it != registry.caches.end();) {
    it = it->second.expired() ? registry.caches.erase(it) : std::next(it);
  }
  if (auto found = registry.caches.find(key); found != registry.caches.end()) {
    if (auto cache = found->second.lock()) return cache;
  }
  if (!make) return nullptr;
  auto cache = make();
  registry.caches[key] = cache;
  return cache;
}

}  // namespace celos::kube
