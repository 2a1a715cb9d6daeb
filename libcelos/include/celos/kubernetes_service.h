// The Kubernetes external service (issue 30): each attempt of a slot runs as one batch/v1 Job,
// spoken to over the API server's REST API with the shared HTTP client (libcurl).
//
// submit(): POST a Job named kubernetes_job_name(slot, n) with spec.suspend true,
// backoffLimit 0 (celos retries), labels celos.workflow / celos.slot (label-safe forms) and the
// exact values in annotations of the same names, one container `main` with the image, command,
// args, the CELOS_* environment of SPEC §7.2 plus `env`, and `resources` as both requests and
// limits. n is the first attempt number whose name is free or holds a Job of this slot that is
// still suspended: such a Job was created before a crash and never recorded, so it is adopted
// (its external id returned) instead of creating another (SPEC §16). A Job that is no longer
// suspended is never resumed again. The external id is `<namespace>/<job name>`.
//
// start(): a JSON patch that tests spec.suspend is true and sets it false, so a Job is resumed
// at most once (a Job already resumed answers 422 to the test: not an error).
//
// status_many(): from the namespace's cache (kube_cache.h) while its two watches are live: a
// list of the namespace's celos Jobs (label selector) and of their Pending pods, then a watch
// of each from the list's resourceVersion on a thread of its own, shared by the services of the
// same API server and credentials; no request at all in a step where the cache answers, but
// a GET for a Job the cache does not have (404: deleted) or that celos created or resumed and
// the watch has not shown yet (at most 16 a namespace). Otherwise, as without the watch: one
// list of the namespace's celos Jobs (following `continue`) per namespace, plus one list of
// its Pending pods when a Job has active pods that are not ready. Complete -> success; Failed ->
// failure with the reason (BackoffLimitExceeded, DeadlineExceeded, ...); suspended -> kSubmitted; a
// Job missing from the list -> failure
// ("deleted behind celos's back"); a pod Pending as Unschedulable -> running with the reason
// as the message.
//
// kill(): DELETE with propagationPolicy Background (a Job already gone is not an error).
// job_log(): the tail of the log of the Job's newest pod.
//
// Errors: a transport failure is ErrorCode::kUnavailable (slots stay READY / RUNNING); 401,
// 403, 404 and 422 on submit are refusals (ErrorCode::kInvalid) with the API server's message;
// 429 is retried once after Retry-After when it is short, else an error naming the wait; 410 on
// a list restarts it without the continue token. 401 and 403 are also kept as the service's
// health (kubernetes_health()), shown by /health/ready.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "celos/clock.h"
#include "celos/external_service.h"
#include "celos/http_client.h"

namespace celos {

// Where the API server is and how to prove who we are: from a kubeconfig or in-cluster.
struct KubeCredentials {
  std::string server;               // https://host:6443 or http://... (tests)
  std::string namespace_;           // the context's namespace ("" if none)
  std::string token;                // bearer token (sent over http:// too)
  std::string token_file;           // read at each refresh (in-cluster tokens rotate)
  std::string ca_file, ca_pem;      // trusted CA (a file or the PEM text)
  std::string cert_file, cert_pem;  // client certificate
  std::string key_file, key_pem;    // client key
  bool insecure = false;            // insecure-skip-tls-verify
  std::string source;               // "kubeconfig /path (context c)" / "in-cluster": for messages
};

// Reads a kubeconfig (YAML, or JSON) and the credentials of its current-context (or `context`
// when non-empty). Relative file paths are relative to the kubeconfig's directory; the
// *-data fields are base64 PEM. Errors name the file, and the line for syntax errors.
[[nodiscard]] Result<KubeCredentials> read_kubeconfig(const std::string& path,
                                                      const std::string& context = {});
// The same from the kubeconfig's text (`path` only for messages and relative paths).
[[nodiscard]] Result<KubeCredentials> parse_kubeconfig(const std::string& text,
                                                       const std::string& path,
                                                       const std::string& context = {});
// In-cluster: KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT and the service account's
// token, ca.crt and namespace under `dir` (/var/run/secrets/kubernetes.io/serviceaccount).
[[nodiscard]] Result<KubeCredentials> in_cluster_credentials(
    const std::string& dir = "/var/run/secrets/kubernetes.io/serviceaccount");

struct KubernetesServiceOptions {
  std::string namespace_;  // empty: the kubeconfig context's, else "default"
  std::string image;
  std::vector<std::string> command, args;  // time variables replaced at submit
  std::map<std::string, std::string> env;  // time variables replaced at submit
  std::string cpu, memory;                 // Kubernetes quantities; requests = limits
  std::string service_account;
  std::map<std::string, std::string> node_selector, labels;
  std::optional<std::int64_t> ttl_seconds_after_finished;
  std::string kubeconfig;  // path; empty with in_cluster false: $KUBECONFIG, ~/.kube/config
  std::string context;     // kubeconfig context; empty: current-context
  bool in_cluster = false;
  std::chrono::milliseconds timeout{30000};         // bound of each API call (`--io-timeout`)
  std::chrono::milliseconds max_retry_after{2000};  // longest 429 Retry-After waited for
  Clock* clock = &system_clock();  // waits out a Retry-After and the watch's back-off; not owned
  // Keep each namespace's Jobs and Pending pods in memory from a watch (list once, then watch;
  // status steps answer from it while it is live). Off: every status step lists.
  bool watch = true;
};

// The service; `http` null means a libcurl client made from the credentials (TLS verified).
// Credentials are read at the first call (and again after a failure), never at load time.
ExternalServicePtr make_kubernetes_external_service(KubernetesServiceOptions options,
                                                    std::shared_ptr<HttpClient> http = nullptr);
// The same with credentials given (tests).
ExternalServicePtr make_kubernetes_external_service(KubernetesServiceOptions options,
                                                    KubeCredentials credentials,
                                                    std::shared_ptr<HttpClient> http);

// The Job name of attempt `attempt` (1, 2, ...) of `slot`: `<workflow>-<yyyymmddthhmmss>-<n>`
// lowered to DNS-1123 (a-z, 0-9, '-'), at most 63 characters; when the workflow part must be
// shortened or changed, a hash of the exact workflow id keeps names unique. Deterministic.
std::string kubernetes_job_name(const SlotId& slot, int attempt);
// A label value for `text` (at most 63 of [A-Za-z0-9._-], alphanumeric at both ends), with a
// hash suffix when it had to change.
std::string kubernetes_label_value(const std::string& text);
// Checks a resource quantity ("500m", "2", "1Gi", "1.5G", "128974848", "1e3").
[[nodiscard]] Result<void> validate_kube_quantity(const std::string& text);
// Checks a label key (`prefix/name`) or value as Kubernetes does.
[[nodiscard]] Result<void> validate_kube_label(const std::string& key, const std::string& value);
// A DNS-1123 label (namespace, service account): at most 63 of [a-z0-9-].
bool is_dns_label(const std::string& text);

// The health of the Kubernetes services: "ok", or the last 401/403 an API server answered
// (per server), for /health/ready. nullopt when no Kubernetes service has called yet.
std::optional<std::string> kubernetes_health();

}  // namespace celos
