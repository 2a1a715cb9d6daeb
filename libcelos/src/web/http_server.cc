#include "celos/http_server.h"

#include "celos/mutex.h"
#include "celos/utf8.h"

// GCC 12's -Wnull-dereference fires inside Boost.Asio's own headers (io_context.hpp,
// scheduler.ipp) once they are inlined here; that is not our code.
#pragma GCC diagnostic ignored "-Wnull-dereference"
#if defined(__GNUC__) && !defined(__clang__)
// Asio uses std::atomic_thread_fence, which GCC's -fsanitize=thread warns about (tsan preset).
#pragma GCC diagnostic ignored "-Wtsan"
#endif

#include <atomic>
#include <exception>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace celos {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool percent_decode(std::string_view in, std::string& out) {
  out.clear();
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = hex_value(in[i + 1]), lo = hex_value(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return true;
}

// Parameters are text: bytes that are not UTF-8 are refused (never echoed into JSON).
std::string invalid_utf8_in(const HttpServerRequest& request) {
  if (!is_valid_utf8(request.path)) return "the request path is not valid UTF-8";
  for (const auto& [name, value] : request.query) {
    if (!is_valid_utf8(name)) return "a query parameter name is not valid UTF-8";
    if (!is_valid_utf8(value)) {
      return fmt::format("query parameter \"{}\" is not valid UTF-8", printable_ascii(name));
    }
  }
  return "";
}

class Session;

// What the acceptor and every session share: options, handler, and the set of live sessions
// that stop() must close.
struct ServerCore {
  HttpServerOptions options;
  AsyncHttpHandler handler;
  net::io_context ioc;
  std::atomic<bool> stopping{false};
  Mutex mutex;
  CondVar sessions_gone;
  std::uint64_t next_id GUARDED_BY(mutex) = 0;
  std::unordered_map<std::uint64_t, std::weak_ptr<Session>> sessions GUARDED_BY(mutex);
  Mutex run_mutex;
  bool running GUARDED_BY(run_mutex) = true;  // false once stop() has joined the threads

  ServerCore(HttpServerOptions o, AsyncHttpHandler h)
      : options(std::move(o)), handler(std::move(h)), ioc(std::max(1, options.threads)) {}

  // Posts `f` unless the threads have ended: a handler queued on an io_context that no thread
  // runs any more holds its session, and through it this core and the io_context, forever (a
  // late answer of an asynchronous handler after stop()). An `f` not posted is destroyed after
  // the lock is released (it is a parameter), so the session it may hold can take `mutex`.
  template <typename Executor, typename F>
  void post(const Executor& executor, F f) {
    MutexLock lock(run_mutex);
    if (running) net::post(executor, std::move(f));
  }
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<ServerCore> core)
      : stream_(std::move(socket)), core_(std::move(core)) {
    beast::error_code ec;
    const auto peer = stream_.socket().remote_endpoint(ec);
    if (!ec) remote_ = fmt::format("{}:{}", peer.address().to_string(), peer.port());
  }

  ~Session() {
    MutexLock lock(core_->mutex);
    core_->sessions.erase(id_);
    if (core_->sessions.empty()) core_->sessions_gone.notify_all();
  }

  void start(std::uint64_t id) {
    id_ = id;
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read(); });
  }

  // Called on stop(): an idle connection is closed now, a busy one after its answer; with
  // `cut` (stop_timeout has passed) every connection is closed now.
  void close_if_idle(bool cut) {
    core_->post(stream_.get_executor(), [self = shared_from_this(), cut] {
      if (cut || !self->busy_) self->close();
    });
  }

 private:
  void read() {
    if (core_->stopping) return close();
    parser_.emplace();
    parser_->body_limit(core_->options.max_body_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(core_->options.max_header_bytes));
    // An idle keep-alive connection may wait longer than a request that is being sent.
    stream_.expires_after(first_ ? core_->options.read_timeout : core_->options.keep_alive_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t) {
    if (ec == http::error::body_limit) return reject(413, "request body too large");
    if (ec == http::error::header_limit) return reject(431, "request header too large");
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) return close();
    if (ec && ec.category() == beast::error_code(http::error::bad_target).category()) {
      return reject(400, "malformed HTTP request: " + ec.message());
    }
    if (ec) return close();  // timeout, reset, or closed by stop()
    busy_ = true;
    started_ = core_->options.clock->monotonic();
    auto& message = parser_->get();
    keep_alive_ = message.keep_alive();
    version_ = message.version();

    HttpServerRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    request.remote = remote_;
    request.body = std::move(message.body());
    for (const auto& field : message) {
      std::string name(field.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      request.headers[name] = std::string(field.value());
    }
    if (!parse_request_target(request.target, request.path, request.query)) {
      return answer(json_error(400, "malformed request target: " + printable_ascii(request.target)),
                    request);
    }
    if (auto problem = invalid_utf8_in(request); !problem.empty()) {
      return answer(json_error(400, problem), request);
    }
    dispatch(std::move(request));
  }

  void dispatch(HttpServerRequest request) {
    auto answered = std::make_shared<std::atomic<bool>>(false);
    auto method = request.method, target = request.target;
    // The work guard keeps the io_context running while a worker thread prepares the answer.
    HttpResponder responder = [self = shared_from_this(), answered, method, target,
                               guard = net::make_work_guard(stream_.get_executor())](
                                  HttpServerResponse response) mutable {
      if (answered->exchange(true)) return;
      self->core_->post(self->stream_.get_executor(),
                        [self, method = std::move(method), target = std::move(target),
                         response = std::move(response)]() mutable {
                          self->write(std::move(response), method, target);
                        });
      guard.reset();
    };
    try {
      core_->handler(std::move(request), responder);
    } catch (const std::exception& e) {
      spdlog::error("request {} {} failed: {}", method, target, e.what());
      responder(json_error(500, std::string("internal error: ") + e.what()));
    } catch (...) {
      responder(json_error(500, "internal error"));
    }
  }

  void answer(HttpServerResponse response, const HttpServerRequest& request) {
    write(std::move(response), request.method, request.target);
  }

  void reject(int status, std::string message) {
    keep_alive_ = false;
    busy_ = true;
    started_ = core_->options.clock->monotonic();
    version_ = 11;
    write(json_error(status, message), "-", "-");
  }

  void write(HttpServerResponse response, const std::string& method, const std::string& target) {
    if (core_->options.log_requests) {
      const auto ms =
          std::chrono::duration<double, std::milli>(core_->options.clock->monotonic() - started_)
              .count();
      spdlog::info("http {} {} {} {} {:.1f}ms", remote_, method, target, response.status, ms);
    }
    if (core_->stopping) keep_alive_ = false;
    response_.emplace();
    auto& res = *response_;
    res.version(version_);
    res.result(static_cast<unsigned>(response.status));
    res.set(http::field::server, "celos");
    res.set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) res.set(name, value);
    res.keep_alive(keep_alive_);
    res.body() = std::move(response.body);
    res.prepare_payload();
    stream_.expires_after(core_->options.write_timeout);
    http::async_write(stream_, res,
                      beast::bind_front_handler(&Session::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t) {
    busy_ = false;
    first_ = false;
    if (ec || !keep_alive_ || core_->stopping) return close();
    read();
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  std::shared_ptr<ServerCore> core_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::string_body>> response_;
  std::string remote_ = "?";
  std::uint64_t id_ = 0;
  bool first_ = true;
  bool busy_ = false;
  bool keep_alive_ = false;
  unsigned version_ = 11;
  Clock::Monotonic started_{};
};

class BeastServer : public HttpServer {
 public:
  BeastServer(HttpServerOptions options, AsyncHttpHandler handler)
      : core_(std::make_shared<ServerCore>(std::move(options), std::move(handler))),
        acceptor_(net::make_strand(core_->ioc)) {
    tcp::resolver resolver(core_->ioc);
    beast::error_code ec;
    const auto results =
        resolver.resolve(core_->options.host, std::to_string(core_->options.port), ec);
    if (ec || results.empty()) {
      throw std::runtime_error(
          fmt::format("cannot resolve host {}: {}", core_->options.host, ec.message()));
    }
    const tcp::endpoint endpoint = results.begin()->endpoint();
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
      throw std::runtime_error(fmt::format("cannot listen on {}:{}: {}", core_->options.host,
                                           core_->options.port, ec.message()));
    }
    port_ = acceptor_.local_endpoint().port();
    accept();
    for (int i = 0; i < std::max(1, core_->options.threads); ++i) {
      threads_.emplace_back([core = core_] { core->ioc.run(); });
    }
  }

  ~BeastServer() override { stop(); }

  std::uint16_t port() const override { return port_; }

  void stop() override {
    MutexLock stop_lock(stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
    core_->stopping = true;
    net::post(acceptor_.get_executor(), [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
      retry_timer_.cancel();
    });
    if (!close_sessions(false, core_->options.stop_timeout)) {
      close_sessions(true, std::chrono::seconds(1));
    }
    {
      MutexLock lock(core_->run_mutex);
      core_->running = false;
    }
    work_.reset();
    core_->ioc.stop();
    for (auto& thread : threads_) thread.join();
    threads_.clear();
  }

 private:
  void accept() {
    acceptor_.async_accept(net::make_strand(core_->ioc),
                           [this](beast::error_code ec, tcp::socket socket) {
                             if (core_->stopping || ec == net::error::operation_aborted) return;
                             if (ec) return accept_failed(ec);
                             accept_errors_ = 0;
                             auto session = std::make_shared<Session>(std::move(socket), core_);
                             std::uint64_t id;
                             {
                               MutexLock lock(core_->mutex);
                               id = ++core_->next_id;
                               core_->sessions[id] = session;
                             }
                             session->start(id);
                             accept();
                           });
  }

  // Asks every live session to close (see Session::close_if_idle) and waits up to `wait` for
  // them to be gone; true when they are.
  bool close_sessions(bool cut, std::chrono::milliseconds wait) {
    std::vector<std::shared_ptr<Session>> live;
    {
      MutexLock lock(core_->mutex);
      for (auto& [id, weak] : core_->sessions) {
        if (auto session = weak.lock()) live.push_back(std::move(session));
      }
    }
    for (auto& session : live) session->close_if_idle(cut);
    live.clear();
    MutexLock lock(core_->mutex);
    Clock& clock = *core_->options.clock;
    const auto deadline = clock.monotonic() + wait;
    while (!core_->sessions.empty() &&
           clock.wait_until(core_->sessions_gone, core_->mutex, deadline)) {
    }
    return core_->sessions.empty();
  }

  // Out of file descriptors (EMFILE, ENFILE), memory, or a connection reset before it was
  // accepted: the server must go on accepting once the condition passes, so it pauses briefly
  // (letting connections close) and tries again. Logged at the first error of a run and then
  // every 100th, so a long exhaustion does not flood the log.
  void accept_failed(const beast::error_code& ec) {
    if (accept_errors_++ % 100 == 0) {
      spdlog::error("accepting a connection failed: {} ({} in a row); retrying in 100 ms",
                    ec.message(), accept_errors_);
    }
    retry_timer_.expires_after(std::chrono::milliseconds(100));
    retry_timer_.async_wait([this](beast::error_code timer_ec) {
      if (timer_ec || core_->stopping) return;
      accept();
    });
  }

  std::shared_ptr<ServerCore> core_;
  // Keeps the threads in io_context::run() until stop() is done with the sessions: without
  // it they return as soon as nothing is pending (the acceptor closed, the last connection
  // just ended), and what stop() then posts to the sessions is never run.
  net::executor_work_guard<net::io_context::executor_type> work_{core_->ioc.get_executor()};
  tcp::acceptor acceptor_;
  net::steady_timer retry_timer_{acceptor_.get_executor()};
  std::uint64_t accept_errors_ = 0;  // consecutive accept failures (on the acceptor's strand)
  std::uint16_t port_ = 0;
  std::vector<std::thread> threads_;
  Mutex stop_mutex_;
  bool stopped_ GUARDED_BY(stop_mutex_) = false;
};

}  // namespace

bool parse_request_target(std::string_view target, std::string& path,
                          std::multimap<std::string, std::string>& query) {
  path.clear();
  query.clear();
  if (target.empty() || target.front() != '/') return false;
  const auto question = target.find('?');
  if (!percent_decode(target.substr(0, question), path)) return false;
  if (question == std::string_view::npos) return true;
  std::string_view rest = target.substr(question + 1);
  const auto hash = rest.find('#');
  if (hash != std::string_view::npos) rest = rest.substr(0, hash);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    std::string name, value;
    if (!percent_decode(pair.substr(0, eq), name)) return false;
    if (eq != std::string_view::npos && !percent_decode(pair.substr(eq + 1), value)) return false;
    query.emplace(std::move(name), std::move(value));
  }
  return true;
}

const std::string* query_param(const HttpServerRequest& request, const std::string& name) {
  const auto it = request.query.find(name);
  return it == request.query.end() ? nullptr : &it->second;
}

HttpServerResponse json_error(int status, std::string_view message) {
  HttpServerResponse response;
  response.status = status;
  response.body = boost::json::serialize(boost::json::object{{"error", message}});
  return response;
}

HttpResponder respond_once(HttpResponder inner,
                           std::function<void(const HttpServerResponse&)> on_first) {
  struct Once {
    Mutex mutex;
    HttpResponder inner GUARDED_BY(mutex);
    std::function<void(const HttpServerResponse&)> on_first GUARDED_BY(mutex);
  };
  auto once = std::make_shared<Once>();
  {
    MutexLock lock(once->mutex);
    once->inner = std::move(inner);
    once->on_first = std::move(on_first);
  }
  return [once](HttpServerResponse response) {
    HttpResponder target;
    std::function<void(const HttpServerResponse&)> observe;
    {
      MutexLock lock(once->mutex);
      target.swap(once->inner);
      observe.swap(once->on_first);
    }
    if (!target) return;
    if (observe) observe(response);
    target(std::move(response));
  };
}

std::unique_ptr<HttpServer> start_async_http_server(HttpServerOptions options,
                                                    AsyncHttpHandler handler) {
  return std::make_unique<BeastServer>(std::move(options), std::move(handler));
}

std::unique_ptr<HttpServer> start_http_server(HttpServerOptions options, HttpHandler handler) {
  return start_async_http_server(
      std::move(options),
      [handler = std::move(handler)](HttpServerRequest request, HttpResponder respond) {
        // Exceptions of the handler are turned into a 500 by the session.
        respond(handler(request));
      });
}

}  // namespace celos
