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

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds total_timeout{30000};
  bool negotiate = false;  // Kerberos/SPNEGO via libcurl's GSS-API support
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
