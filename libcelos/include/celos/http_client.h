// A small HTTP client interface (libcurl behind it; fakes in tests). Used to talk to Oozie,
// WebHDFS, Kubernetes API servers (also their watch streams) and, from celos-ui, to
// celos-server.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "celos/error.h"
#include "celos/mutex.h"

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

// Ends HttpClient::stream() calls from another thread: the one in progress at once, later ones
// before they start. Thread-safe; once cancelled, always cancelled.
class HttpCancel {
 public:
  void cancel() EXCLUDES(mutex_);
  bool cancelled() const EXCLUDES(mutex_);
  // For implementations: cancel() calls `wake` (under this object's lock) while it is set;
  // false (and `wake` not kept) when already cancelled. Clear it with an empty function
  // before what `wake` touches goes away.
  bool set_waker(std::function<void()> wake) EXCLUDES(mutex_);

 private:
  mutable Mutex mutex_;
  bool cancelled_ GUARDED_BY(mutex_) = false;
  std::function<void()> wake_ GUARDED_BY(mutex_);
};

// How HttpClient::stream() reads a long answer (a Kubernetes watch) as it arrives.
struct HttpStreamOptions {
  // The answer's status, once its head has arrived (before any body).
  std::function<void(int status)> on_status;
  // The body of a 2xx answer, chunk by chunk as received; returning false ends the transfer
  // (stream() then returns the response, not an error).
  std::function<bool(std::string_view data)> on_data;
  std::shared_ptr<HttpCancel> cancel;    // may be null
  std::chrono::milliseconds timeout{0};  // bound of the whole transfer; 0: none
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Any HTTP status is a response; only transport failures (refused, timed out, bad URL) are
  // errors, and their message names the method and URL.
  [[nodiscard]] virtual Result<HttpResponse> send(const HttpRequest& request) = 0;
  // Sends `request` and hands a 2xx answer's body to options.on_data as it arrives (the
  // returned response's body is then empty); another status's body is returned whole.
  // Transport failures and a cancel are errors (kUnavailable). The default calls send() and
  // hands the whole body over at once (fakes that do not stream).
  [[nodiscard]] virtual Result<HttpResponse> stream(const HttpRequest& request,
                                                    const HttpStreamOptions& options);
};

// libcurl-based client; safe to use from several threads (a handle per thread, reused).
std::shared_ptr<HttpClient> make_curl_http_client(HttpClientOptions options = {});

// Percent-encodes a query parameter value.
std::string url_encode(std::string_view text);

}  // namespace celos
