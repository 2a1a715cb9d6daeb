// The Kubernetes external service (celos/kubernetes_service.h). The Job body and the reading of
// Job objects are io/kubernetes/kube_job.cc; the requests, credentials and error messages are
// io/kubernetes/kube_api.cc; the watch-fed cache of each namespace is io/kubernetes/kube_cache.cc;
// this file decides what to ask and what the answers mean.
#include <set>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/dataset.h"
#include "celos/utf8.h"
#include "io/kubernetes/kube_api.h"
#include "io/kubernetes/kube_cache.h"
#include "io/kubernetes/kube_job.h"

namespace celos {
namespace {

namespace json = boost::json;
using kube::KubeApi;

// The most Jobs of one slot that submit() looks past (earlier attempts still in the cluster).
constexpr int kMaxAttempts = 100;
constexpr std::size_t kMaxLogBytes = std::size_t{64} << 20;
// The most Jobs of a namespace a status step asks for one by one when the cache cannot answer
// for them (just created, or gone); more, and it lists the namespace instead.
constexpr std::size_t kMaxAsked = 16;

struct JobRef {
  std::string ns, name;
};

Result<JobRef> parse_id(const std::string& external_id) {
  const std::size_t slash = external_id.find('/');
  if (slash == std::string::npos || external_id.find('/', slash + 1) != std::string::npos ||
      !is_dns_label(external_id.substr(0, slash)) || slash + 1 == external_id.size()) {
    return fail(fmt::format("\"{}\" is not a Kubernetes job id (<namespace>/<name>)", external_id),
                ErrorCode::kInvalid);
  }
  return JobRef{external_id.substr(0, slash), external_id.substr(slash + 1)};
}

std::string jobs_path(const std::string& ns) {
  return fmt::format("/apis/batch/v1/namespaces/{}/jobs", ns);
}

// The UTF-8-safe last `tail` bytes of `text`.
std::string tail_of(const std::string& text, std::size_t tail) {
  if (text.size() <= tail) return text;
  std::size_t start = text.size() - tail;
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  return text.substr(start);
}

class KubernetesService : public ExternalService {
 public:
  KubernetesService(KubernetesServiceOptions options, std::optional<KubeCredentials> credentials,
                    std::shared_ptr<HttpClient> http)
      : options_(options),
        cache_key_(endpoint() + (credentials ? " " + credentials->server : "") +
                   (http ? fmt::format(" client {}", static_cast<const void*>(http.get())) : "")),
        api_(std::make_shared<KubeApi>(std::move(options), std::move(credentials),
                                       std::move(http))) {}

  Result<std::string> submit(const SlotId& slot) override { return submit_with(slot, {}); }
  Result<std::string> submit_with(const SlotId& slot, const SubmitContext& context) override;
  Result<void> start(const SlotId& slot, const std::string& external_id) override;
  Result<ExternalStatus> status(const SlotId& slot, const std::string& external_id) override {
    return status_many({Job{slot, external_id}}).at(external_id);
  }
  std::map<std::string, Result<ExternalStatus>> status_many(const std::vector<Job>& jobs) override;
  Result<void> kill(const SlotId& slot, const std::string& external_id) override;
  // The pod's log, from the API server (the output is kept by Kubernetes, not in celos's jobs
  // directory).
  Result<std::string> job_log(const SlotId& slot, const std::string& external_id,
                              std::string_view stream, std::size_t tail) override;

  // One list call answers for every job of a namespace.
  ServiceTraits traits() const override {
    return {.batches_status = true, .writes_done_flags = true};
  }
  std::string describe() const override {
    return fmt::format("kubernetes {} \"{}\"",
                       options_.namespace_.empty() ? "-" : options_.namespace_,
                       clipped(options_.image, 60));
  }
  std::string_view kind() const override { return "kubernetes"; }
  // Services with the same credentials answer for each other's jobs: one list per namespace.
  // Limits are per namespace ("kubernetes" alone: the namespace of the credentials' context).
  std::string limit_endpoint() const override {
    return options_.namespace_.empty() ? "kubernetes" : "kubernetes " + options_.namespace_;
  }
  std::string endpoint() const override {
    return "kubernetes " + (options_.in_cluster ? std::string("in-cluster")
                                                : options_.kubeconfig + "#" + options_.context);
  }

 private:
  // Attempt `n`'s Job exists: adopt it if it is this slot's and still suspended.
  Result<std::optional<std::string>> adopt(const SlotId& slot, const std::string& ns,
                                           const std::string& name);
  Result<json::array> list(const std::string& path, const std::string& query);
  void answer_namespace(const std::string& ns, const std::vector<const Job*>& jobs,
                        std::map<std::string, Result<ExternalStatus>>& results);
  void list_namespace(const std::string& ns, const std::vector<const Job*>& jobs,
                      std::map<std::string, Result<ExternalStatus>>& results);
  Result<ExternalStatus> ask(kube::NamespaceCache& cache, const std::string& ns, const Job& job);
  // The watch-fed cache of `ns` (shared with the services of the same server and
  // credentials), made if `make` and there is none; null when options_.watch is off. Submit
  // and start only tell a cache that exists: one made later lists after their changes.
  // `made` (if given) says whether this call made it.
  std::shared_ptr<kube::NamespaceCache> cache_for(const std::string& ns, bool make = false,
                                                  bool* made = nullptr) EXCLUDES(mutex_);

  KubernetesServiceOptions options_;
  const std::string cache_key_;
  std::shared_ptr<KubeApi> api_;
  Mutex mutex_;
  std::map<std::string, std::shared_ptr<kube::NamespaceCache>> caches_ GUARDED_BY(mutex_);
};

ExternalStatus lost(const std::string& external_id) {
  return ExternalStatus(
      JobState::kFailure,
      fmt::format("Kubernetes Job {} no longer exists: it was deleted behind celos's back "
                  "(or by its ttlSecondsAfterFinished before celos saw it end)",
                  external_id));
}

std::shared_ptr<kube::NamespaceCache> KubernetesService::cache_for(const std::string& ns, bool make,
                                                                   bool* made) {
  if (!options_.watch) return nullptr;
  MutexLock lock(mutex_);
  if (auto held = caches_.find(ns); held != caches_.end()) return held->second;
  auto cache = kube::shared_namespace_cache(
      cache_key_ + " namespace " + ns,
      make ? std::function<std::shared_ptr<kube::NamespaceCache>()>([&] {
        if (made != nullptr) *made = true;
        return std::make_shared<kube::NamespaceCache>(api_, ns, *options_.clock);
      })
           : nullptr);
  if (cache) caches_[ns] = cache;
  return cache;
}

Result<std::string> KubernetesService::submit_with(const SlotId& slot,
                                                   const SubmitContext& context) {
  auto ns = api_->job_namespace();
  if (!ns) return tl::unexpected(ns.error());
  std::map<std::string, std::string> extra = context.env;
  for (const auto& [name, value] : options_.env) extra[name] = value;
  const auto env = kube::job_environment(slot, extra);
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    const std::string name = kubernetes_job_name(slot, attempt);
    const std::string body = json::serialize(kube::job_body(options_, slot, name, env));
    auto answer = api_->send("POST", jobs_path(*ns), body, "application/json");
    if (!answer) return tl::unexpected(answer.error());
    if (answer->status == 201 || answer->status == 200) {
      if (auto cache = cache_for(*ns)) {
        boost::system::error_code ec;
        const json::value created = json::parse(answer->body, ec);
        cache->note_created(name, ec ? std::string() : kube::uid_of(created));
      }
      return *ns + "/" + name;
    }
    if (answer->status != 409) {
      return tl::unexpected(api_->error_of(*answer, "creating Kubernetes Job " + *ns + "/" + name));
    }
    auto adopted = adopt(slot, *ns, name);
    if (!adopted) return tl::unexpected(adopted.error());
    if (*adopted) return **adopted;
  }
  return fail(fmt::format("slot {} already has {} Kubernetes Jobs in namespace {}: delete the "
                          "old ones (or set ttlSecondsAfterFinished)",
                          to_string(slot), kMaxAttempts, *ns),
              ErrorCode::kInvalid);
}

Result<std::optional<std::string>> KubernetesService::adopt(const SlotId& slot,
                                                            const std::string& ns,
                                                            const std::string& name) {
  auto answer = api_->send("GET", jobs_path(ns) + "/" + name);
  if (!answer) return tl::unexpected(answer.error());
  if (answer->status == 404) return std::optional<std::string>{};  // gone meanwhile: next name
  if (answer->status != 200) {
    return tl::unexpected(api_->error_of(*answer, "reading Kubernetes Job " + ns + "/" + name));
  }
  boost::system::error_code ec;
  const json::value job = json::parse(answer->body, ec);
  if (ec) return fail("the API server answered no JSON for Job " + ns + "/" + name);
  if (!kube::belongs_to(job, slot) || !kube::is_suspended(job)) {
    return std::optional<std::string>{};  // an earlier attempt (or another slot's): next name
  }
  spdlog::info(
      "slot {}: adopting the suspended Kubernetes Job {}/{} that an earlier submit "
      "created but never recorded",
      to_string(slot), ns, name);
  if (auto cache = cache_for(ns)) cache->note_created(name, kube::uid_of(job));
  return std::optional<std::string>(ns + "/" + name);
}

Result<void> KubernetesService::start(const SlotId&, const std::string& external_id) {
  auto ref = parse_id(external_id);
  if (!ref) return tl::unexpected(ref.error());
  // The test makes the resume happen at most once, whoever asks.
  const std::string patch = R"([{"op":"test","path":"/spec/suspend","value":true},)"
                            R"({"op":"replace","path":"/spec/suspend","value":false}])";
  auto answer = api_->send("PATCH", jobs_path(ref->ns) + "/" + ref->name, patch,
                           "application/json-patch+json");
  if (!answer) return tl::unexpected(answer.error());
  if (answer->status == 200) {
    if (auto cache = cache_for(ref->ns)) cache->note_resumed(ref->name);
    return {};
  }
  if (answer->status == 422) return {};  // no longer suspended
  return tl::unexpected(api_->error_of(*answer, "resuming Kubernetes Job " + external_id));
}

Result<void> KubernetesService::kill(const SlotId&, const std::string& external_id) {
  auto ref = parse_id(external_id);
  if (!ref) return tl::unexpected(ref.error());
  auto answer =
      api_->send("DELETE", jobs_path(ref->ns) + "/" + ref->name + "?propagationPolicy=Background",
                 R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})",
                 "application/json");
  if (!answer) return tl::unexpected(answer.error());
  if (answer->status == 200 || answer->status == 202 || answer->status == 404) return {};
  return tl::unexpected(api_->error_of(*answer, "deleting Kubernetes Job " + external_id));
}

// All items of a list, following `continue`; a 410 (the continue token expired) starts over.
Result<json::array> KubernetesService::list(const std::string& path, const std::string& query) {
  json::array items;
  std::string token;
  for (int pages = 0; pages < 10000; ++pages) {
    auto answer = api_->send(
        "GET", path + "?" + query + (token.empty() ? "" : "&continue=" + url_encode(token)));
    if (!answer) return tl::unexpected(answer.error());
    if (answer->status == 410 && !token.empty()) {
      items.clear();
      token.clear();
      continue;
    }
    if (answer->status != 200) return tl::unexpected(api_->error_of(*answer, "listing " + path));
    boost::system::error_code ec;
    json::value page = json::parse(answer->body, ec);
    if (ec || !page.is_object()) return fail("listing " + path + ": the answer is not JSON");
    if (json::value* got = page.as_object().if_contains("items"); got && got->is_array()) {
      for (json::value& item : got->as_array()) items.push_back(std::move(item));
    }
    const json::value* next = page.as_object().if_contains("metadata");
    next = next && next->is_object() ? next->as_object().if_contains("continue") : nullptr;
    if (!next || !next->is_string() || next->as_string().empty()) return items;
    token = std::string(next->as_string());
  }
  return fail("listing " + path + ": too many pages");
}

// From the namespace's cache when its watches are live (the few Jobs it cannot answer for are
// asked one by one), else from lists. The step that makes the cache waits for its first lists
// (at most the API timeout) instead of listing the same Jobs itself.
void KubernetesService::answer_namespace(const std::string& ns, const std::vector<const Job*>& jobs,
                                         std::map<std::string, Result<ExternalStatus>>& results) {
  bool made = false;
  if (auto cache = cache_for(ns, /*make=*/true, &made)) {
    if (made) cache->wait_live(*options_.clock, options_.timeout);
    std::vector<const Job*> asked;
    if (cache->answer(jobs, results, asked) && asked.size() <= kMaxAsked) {
      for (const Job* job : asked) results[job->external_id] = ask(*cache, ns, *job);
      return;
    }
  }
  list_namespace(ns, jobs, results);
}

// One Job the cache could not answer for, asked directly.
Result<ExternalStatus> KubernetesService::ask(kube::NamespaceCache& cache, const std::string& ns,
                                              const Job& job) {
  const std::string name = job.external_id.substr(ns.size() + 1);
  auto answer = api_->send("GET", jobs_path(ns) + "/" + name);
  if (!answer) return tl::unexpected(answer.error());
  if (answer->status == 404) {
    cache.forget(name);
    return lost(job.external_id);
  }
  if (answer->status != 200) {
    return tl::unexpected(api_->error_of(*answer, "reading Kubernetes Job " + job.external_id));
  }
  boost::system::error_code ec;
  const json::value found = json::parse(answer->body, ec);
  if (ec) return fail("the API server answered no JSON for Job " + job.external_id);
  ExternalStatus status = kube::job_status(found, job.external_id);
  if (status.state == JobState::kRunning && kube::waits_for_pods(found)) {
    if (auto why = cache.pending_reason(name)) status.message = *why;
  }
  return status;
}

void KubernetesService::list_namespace(const std::string& ns, const std::vector<const Job*>& jobs,
                                       std::map<std::string, Result<ExternalStatus>>& results) {
  const std::string selector = "labelSelector=" + url_encode(kube::kWorkflowLabel);
  auto listed = list(jobs_path(ns), selector);
  if (!listed) {
    for (const Job* job : jobs) results[job->external_id] = tl::unexpected(listed.error());
    return;
  }
  std::map<std::string, const json::value*> by_name;
  bool pending = false;
  for (const json::value& item : *listed) {
    by_name[kube::name_of(item)] = &item;
  }
  for (const Job* job : jobs) {
    auto found = by_name.find(job->external_id.substr(ns.size() + 1));
    if (found == by_name.end()) continue;
    pending = pending || kube::waits_for_pods(*found->second);
  }
  std::map<std::string, std::string> waiting;  // job name -> why its pod waits
  if (pending) {
    auto pods = list(fmt::format("/api/v1/namespaces/{}/pods", ns),
                     selector + "&fieldSelector=" + url_encode("status.phase=Pending"));
    for (const json::value& pod : pods ? *pods : json::array{}) {
      if (auto why = kube::pending_reason(pod)) waiting[kube::job_of_pod(pod)] = *why;
    }
  }
  for (const Job* job : jobs) {
    const std::string name = job->external_id.substr(ns.size() + 1);
    auto found = by_name.find(name);
    if (found == by_name.end()) {
      results[job->external_id] = lost(job->external_id);
      continue;
    }
    ExternalStatus status = kube::job_status(*found->second, job->external_id);
    if (status.state == JobState::kRunning && waiting.count(name)) status.message = waiting[name];
    results[job->external_id] = std::move(status);
  }
}

std::map<std::string, Result<ExternalStatus>> KubernetesService::status_many(
    const std::vector<Job>& jobs) {
  std::map<std::string, Result<ExternalStatus>> results;
  std::map<std::string, std::vector<const Job*>> by_namespace;
  for (const Job& job : jobs) {
    auto ref = parse_id(job.external_id);
    if (!ref) {
      results[job.external_id] = tl::unexpected(ref.error());
    } else {
      by_namespace[ref->ns].push_back(&job);
    }
  }
  for (const auto& [ns, of_ns] : by_namespace) answer_namespace(ns, of_ns, results);
  return results;
}

Result<std::string> KubernetesService::job_log(const SlotId& slot, const std::string& external_id,
                                               std::string_view stream, std::size_t tail) {
  auto ref = parse_id(external_id);
  if (!ref) return tl::unexpected(ref.error());
  if (stream != "stdout") {
    return fail(fmt::format("Kubernetes keeps one log per container (stdout and stderr "
                            "together): ask for stream stdout of slot {}",
                            to_string(slot)),
                ErrorCode::kNotFound);
  }
  auto pods = list(fmt::format("/api/v1/namespaces/{}/pods", ref->ns),
                   "labelSelector=" + url_encode("job-name=" + ref->name));
  if (!pods) return tl::unexpected(pods.error());
  std::string newest, created;
  for (const json::value& pod : *pods) {
    const json::value* meta = pod.as_object().if_contains("metadata");
    const json::value* at = meta ? meta->as_object().if_contains("creationTimestamp") : nullptr;
    const std::string when = at && at->is_string() ? std::string(at->as_string()) : "";
    if (newest.empty() || when >= created) newest = kube::name_of(pod), created = when;
  }
  if (newest.empty()) {
    return fail(
        fmt::format("Kubernetes Job {} has no pod (not started, or collected)", external_id),
        ErrorCode::kNotFound);
  }
  auto answer = api_->send("GET", fmt::format("/api/v1/namespaces/{}/pods/{}/log?limitBytes={}",
                                              ref->ns, newest, kMaxLogBytes));
  if (!answer) return tl::unexpected(answer.error());
  if (answer->status != 200) {
    Error e = api_->error_of(*answer, "log of pod " + ref->ns + "/" + newest);
    if (answer->status == 400 || answer->status == 404) e.code = ErrorCode::kNotFound;
    return tl::unexpected(e);
  }
  return tail_of(answer->body, tail);
}

}  // namespace

ExternalServicePtr make_kubernetes_external_service(KubernetesServiceOptions options,
                                                    std::shared_ptr<HttpClient> http) {
  return std::make_shared<KubernetesService>(std::move(options), std::nullopt, std::move(http));
}

ExternalServicePtr make_kubernetes_external_service(KubernetesServiceOptions options,
                                                    KubeCredentials credentials,
                                                    std::shared_ptr<HttpClient> http) {
  return std::make_shared<KubernetesService>(std::move(options), std::move(credentials),
                                             std::move(http));
}

}  // namespace celos
