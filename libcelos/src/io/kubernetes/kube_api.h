// One Kubernetes API server as the service speaks to it: credentials read when first needed
// (and again after a failure), the bearer token on every request (over http:// too), a 429
// retried once after a short Retry-After, and answers turned into errors with clear messages.
// Thread-safe. Private to io/kubernetes/.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "celos/http_client.h"
#include "celos/kubernetes_service.h"
#include "celos/mutex.h"

namespace celos::kube {

class KubeApi {
 public:
  KubeApi(KubernetesServiceOptions options, std::optional<KubeCredentials> credentials,
          std::shared_ptr<HttpClient> http);

  // Sends one request (`path` after the server URL); any HTTP status is an answer. Transport
  // failures and unreadable credentials are errors (kUnavailable / kFailed).
  [[nodiscard]] Result<HttpResponse> send(const std::string& method, const std::string& path,
                                          const std::string& body = {},
                                          const std::string& content_type = {});
  // A GET read as it arrives (HttpClient::stream: a watch, or a list that a cancel must be
  // able to end), with send()'s credentials; no 429 retry.
  [[nodiscard]] Result<HttpResponse> stream(const std::string& path,
                                            const HttpStreamOptions& options);
  // The error for an answer that is not a success: "<what>: 403 Forbidden: <message>"; 4xx
  // but 408/429 are kInvalid (refusals), the rest kFailed.
  Error error_of(const HttpResponse& response, const std::string& what) const;
  // The namespace jobs go to: the option's, else the context's, else "default".
  Result<std::string> job_namespace();
  // For messages: the server URL once known, else where it will come from.
  std::string where() const;

 private:
  Result<void> load();
  // The request for `method` `path` with the credentials, and the client to send it with.
  Result<std::pair<HttpRequest, std::shared_ptr<HttpClient>>> request(const std::string& method,
                                                                      const std::string& path);
  Result<std::string> token();
  void note_health(int status, const std::string& message);

  KubernetesServiceOptions options_;
  std::shared_ptr<HttpClient> http_;
  mutable Mutex mutex_;
  std::optional<KubeCredentials> credentials_ GUARDED_BY(mutex_);
  std::shared_ptr<HttpClient> client_ GUARDED_BY(mutex_);
};

// The process-wide health of the API servers (kubernetes_health()).
void set_kubernetes_health(const std::string& server, const std::string& status);

}  // namespace celos::kube
