// A small HTTP/1.1 server (Boost.Beast) around a request handler that is a plain function, so
// that handlers are testable without sockets. Used by celos-server and celos-ui.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "celos/clock.h"

namespace celos {

struct HttpServerRequest {
  std::string method;                             // "GET", "POST", ...
  std::string target;                             // as received: /workflow-slots?id=a%20b
  std::string path;                               // decoded path without the query: /workflow-slots
  std::multimap<std::string, std::string> query;  // decoded query parameters
  std::map<std::string, std::string> headers;     // names lower-case
  std::string body;
  std::string remote;  // peer address, for logs
  // Set by celos::Api before a route's handler runs: the values of the route's `{name}` path
  // segments, and the name of the token that authenticated the request (empty: anonymous).
  std::map<std::string, std::string> path_params;
  std::string token_name;
  // Set by the cluster handler (celos/cluster_api.h) on the leader for a mutation that a known
  // standby forwarded: that standby answers the client and writes the audit record, so the
  // Api does not (SPEC §16).
  bool audited_by_peer = false;
};

struct HttpServerResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::map<std::string, std::string> headers;  // extra headers (e.g. Allow, Location)
};

using HttpHandler = std::function<HttpServerResponse(const HttpServerRequest&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;  // 0 = any free port (see HttpServer::port)
  int threads = 2;
  std::size_t max_body_bytes = 1 << 20;
  std::size_t max_header_bytes = 16 << 10;
  std::chrono::seconds read_timeout{30};  // a client that sends slowly is cut off
  std::chrono::seconds write_timeout{30};
  std::chrono::seconds keep_alive_timeout{60};
  // Longest wait in stop() for requests in flight before their connections are cut.
  std::chrono::seconds stop_timeout{60};
  // One info line per request (peer, method, target, status, duration) through spdlog.
  bool log_requests = true;
  // Measures the requests' durations and stop()'s wait (its monotonic()). Not owned.
  Clock* clock = &system_clock();
};

class HttpServer {
 public:
  virtual ~HttpServer() = default;
  // The bound port (useful with port 0).
  virtual std::uint16_t port() const = 0;
  // Stops accepting, finishes requests in flight (closing idle keep-alive connections at
  // once), cuts the connections still busy after stop_timeout, joins the threads. An
  // asynchronous handler's answer that comes after stop() is dropped. Idempotent.
  virtual void stop() = 0;
};

// Binds and starts serving on background threads; throws std::runtime_error if it cannot bind.
// The handler runs on the server's threads, concurrently; exceptions it throws become 500.
std::unique_ptr<HttpServer> start_http_server(HttpServerOptions options, HttpHandler handler);

// Query helpers: the first value of a parameter, if any.
const std::string* query_param(const HttpServerRequest& request, const std::string& name);

// The asynchronous form: the handler may answer later, from any thread, by calling the
// responder exactly once (e.g. after a job queued on a worker thread). The connection waits for
// the answer without holding a server thread, so other requests go on being served. If the
// handler throws before answering, the client gets a 500.
using HttpResponder = std::function<void(HttpServerResponse)>;
using AsyncHttpHandler = std::function<void(HttpServerRequest, HttpResponder)>;
// A responder that passes on the first answer only and then lets go of `inner` (so a copy kept
// by a pending deadline holds no connection). `on_first` (optional) sees that answer first.
HttpResponder respond_once(HttpResponder inner,
                           std::function<void(const HttpServerResponse&)> on_first = {});
std::unique_ptr<HttpServer> start_async_http_server(HttpServerOptions options,
                                                    AsyncHttpHandler handler);

// Splits a request target into its path and query parameters, percent-decoding both. `+` is
// kept as is (not a space), so that `time=2015-09-13T13:40:00+00:00` survives unencoded.
// False if the target is not a path or has a bad percent escape.
[[nodiscard]] bool parse_request_target(std::string_view target, std::string& path,
                                        std::multimap<std::string, std::string>& query);

// {"error": message} with the given status.
HttpServerResponse json_error(int status, std::string_view message);

}  // namespace celos
