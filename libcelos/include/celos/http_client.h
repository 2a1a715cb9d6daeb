// A small HTTP client interface (libcurl behind it; fakes in tests). Used to talk to Oozie,
// WebHDFS and, from celos-ui, to celos-server.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "celos/error.h"

namespace celos {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  HttpHeaders headers;
  std::string body;
  bool follow_redirects = false;
};

struct HttpResponse {
  int status = 0;
  HttpHeaders headers;  // names as received
  std::string body;
  // The first header with this name (case-insensitive), or "".
  std::string header(std::string_view name) const;
};

// TLS beyond the system's defaults (the Kubernetes API server's own CA, client certificates):
// each given as a file or as PEM text. The peer and host are always verified unless `insecure`.
struct HttpTlsOptions {
  std::string ca_file, ca_pem;      // trust this CA instead of the system's
  std::string cert_file, cert_pem;  // client certificate
  std::string key_file, key_pem;    // its private key
  bool insecure = false;            // skip verification (kubeconfig insecure-skip-tls-verify)
};

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds total_timeout{30000};
  bool negotiate = false;  // Kerberos/SPNEGO via libcurl's GSS-API support
  HttpTlsOptions tls{};
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Any HTTP status is a response; only transport failures (refused, timed out, bad URL) are
  // errors, and their message names the method and URL.
  [[nodiscard]] virtual Result<HttpResponse> send(const HttpRequest& request) = 0;
};

// libcurl-based client; safe to use from several threads (a handle per thread, reused).
std::shared_ptr<HttpClient> make_curl_http_client(HttpClientOptions options = {});

// Percent-encodes a query parameter value.
std::string url_encode(std::string_view text);

}  // namespace celos
