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

namespace celos {

struct HttpServerRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as received: /workflow-slots?id=a%20b
  std::string path;    // decoded path without the query: /workflow-slots
  std::multimap<std::string, std::string> query;  // decoded query parameters
  std::map<std::string, std::string> headers;     // names lower-case
  std::string body;
  std::string remote;  // peer address, for logs
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
};

class HttpServer {
 public:
  virtual ~HttpServer() = default;
  // The bound port (useful with port 0).
  virtual std::uint16_t port() const = 0;
  // Stops accepting, finishes requests in flight, joins the threads. Idempotent.
  virtual void stop() = 0;
};

// Binds and starts serving on background threads; throws std::runtime_error if it cannot bind.
// The handler runs on the server's threads, concurrently; exceptions it throws become 500.
std::unique_ptr<HttpServer> start_http_server(HttpServerOptions options, HttpHandler handler);

// Query helpers: the first value of a parameter, if any.
const std::string* query_param(const HttpServerRequest& request, const std::string& name);

}  // namespace celos
