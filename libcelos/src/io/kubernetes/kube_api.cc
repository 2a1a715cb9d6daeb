// Requests to a Kubernetes API server (kube_api.h).
#include "io/kubernetes/kube_api.h"

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "io/kubernetes/kube_job.h"

namespace celos::kube {
namespace {

// The process-wide health of the API servers: server -> "ok" or the last 401/403.
struct Health {
  Mutex mutex;
  std::map<std::string, std::string> by_server GUARDED_BY(mutex);
};
Health& health() {
  static Health instance;
  return instance;
}

std::string reason_phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "";
  }
}

// Retry-After in whole seconds (the API server sends seconds), or -1.
int retry_after(const HttpResponse& response) {
  const std::string text = response.header("Retry-After");
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return -1;
  return text.size() > 6 ? 999999 : std::stoi(text);
}

HttpClientOptions client_options(const KubeCredentials& c, std::chrono::milliseconds timeout) {
  HttpClientOptions o;
  o.total_timeout = timeout;
  o.connect_timeout = std::min(timeout, std::chrono::milliseconds(5000));
  o.tls = {c.ca_file, c.ca_pem, c.cert_file, c.cert_pem, c.key_file, c.key_pem, c.insecure};
  return o;
}

}  // namespace

void set_kubernetes_health(const std::string& server, const std::string& status) {
  Health& h = health();
  MutexLock lock(h.mutex);
  h.by_server[server] = status;
}

KubeApi::KubeApi(KubernetesServiceOptions options, std::optional<KubeCredentials> credentials,
                 std::shared_ptr<HttpClient> http)
    : options_(std::move(options)), http_(std::move(http)), credentials_(std::move(credentials)) {
  if (credentials_ && http_) client_ = http_;
}

Result<void> KubeApi::load() {
  MutexLock lock(mutex_);
  if (credentials_ && client_) return {};
  if (!credentials_) {
    auto loaded = options_.in_cluster ? in_cluster_credentials()
                                      : read_kubeconfig(options_.kubeconfig, options_.context);
    if (!loaded) {
      set_kubernetes_health(options_.in_cluster ? "in-cluster" : options_.kubeconfig,
                            loaded.error().message);
      return fail(loaded.error().message);  // kFailed: slots stay READY until it is fixed
    }
    credentials_ = std::move(*loaded);
  }
  client_ = http_ ? http_ : make_curl_http_client(client_options(*credentials_, options_.timeout));
  return {};
}

std::string KubeApi::where() const {
  MutexLock lock(mutex_);
  if (credentials_) return credentials_->server;
  return options_.in_cluster ? std::string("in-cluster") : "kubeconfig " + options_.kubeconfig;
}

Result<std::string> KubeApi::token() {
  MutexLock lock(mutex_);
  if (!credentials_->token.empty() || credentials_->token_file.empty()) return credentials_->token;
  // A token file is read each time: in-cluster tokens are rotated while celos runs.
  std::ifstream in(credentials_->token_file, std::ios::binary);
  if (!in) return fail("cannot read the token file " + credentials_->token_file);
  std::ostringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  return token;
}

Result<std::string> KubeApi::job_namespace() {
  if (!options_.namespace_.empty()) return options_.namespace_;
  if (auto ok = load(); !ok) return tl::unexpected(ok.error());
  MutexLock lock(mutex_);
  return credentials_->namespace_.empty() ? std::string("default") : credentials_->namespace_;
}

void KubeApi::note_health(int status, const std::string& message) {
  std::string server;
  {
    MutexLock lock(mutex_);
    server = credentials_->server;
  }
  if (status == 401 || status == 403) {
    set_kubernetes_health(
        server, fmt::format("{} {} from {}: {}", status, reason_phrase(status), server, message));
  } else if (status < 400) {
    set_kubernetes_health(server, "ok");
  }
}

Result<std::pair<HttpRequest, std::shared_ptr<HttpClient>>> KubeApi::request(
    const std::string& method, const std::string& path) {
  if (auto ok = load(); !ok) return tl::unexpected(ok.error());
  auto bearer = token();
  if (!bearer) return tl::unexpected(bearer.error());
  HttpRequest request;
  request.method = method;
  std::shared_ptr<HttpClient> client;
  {
    MutexLock lock(mutex_);
    request.url = credentials_->server + path;
    client = client_;
  }
  request.headers.emplace_back("Accept", "application/json");
  if (!bearer->empty()) request.headers.emplace_back("Authorization", "Bearer " + *bearer);
  return std::make_pair(std::move(request), std::move(client));
}

Result<HttpResponse> KubeApi::send(const std::string& method, const std::string& path,
                                   const std::string& body, const std::string& content_type) {
  auto prepared = request(method, path);
  if (!prepared) return tl::unexpected(prepared.error());
  auto& [request, client] = *prepared;
  if (!content_type.empty()) request.headers.emplace_back("Content-Type", content_type);
  request.body = body;
  for (int attempt = 0;; ++attempt) {
    auto response = client->send(request);
    if (!response) return response;
    note_health(response->status, status_message(response->body));
    const int wait = retry_after(*response);
    if (response->status != 429 || attempt > 0 || wait < 0 ||
        std::chrono::seconds(wait) > options_.max_retry_after) {
      return response;
    }
    options_.clock->sleep_for(std::chrono::seconds(wait));
  }
}

Result<HttpResponse> KubeApi::stream(const std::string& path, const HttpStreamOptions& options) {
  auto prepared = request("GET", path);
  if (!prepared) return tl::unexpected(prepared.error());
  auto response = prepared->second->stream(prepared->first, options);
  if (response) note_health(response->status, status_message(response->body));
  return response;
}

Error KubeApi::error_of(const HttpResponse& response, const std::string& what) const {
  const int s = response.status;
  std::string message =
      fmt::format("{}: {} {}: {}", what, s, reason_phrase(s), status_message(response.body));
  if (s == 401) message += " (the API server refused celos's credentials)";
  if (s == 429) {
    const int wait = retry_after(response);
    message += wait >= 0 ? fmt::format(" (the API server asks to wait {} s)", wait) : "";
  }
  const bool refused = s >= 400 && s < 500 && s != 408 && s != 429 && s != 410;
  return Error{message, refused ? ErrorCode::kInvalid : ErrorCode::kFailed};
}

}  // namespace celos::kube

namespace celos {

std::optional<std::string> kubernetes_health() {
  kube::Health& h = kube::health();
  MutexLock lock(h.mutex);
  if (h.by_server.empty()) return std::nullopt;
  std::string problems;
  for (const auto& [server, status] : h.by_server) {
    if (status != "ok") problems += (problems.empty() ? "" : "; ") + status;
  }
  return problems.empty() ? std::string("ok") : problems;
}

}  // namespace celos
