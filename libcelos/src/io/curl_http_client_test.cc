// The curl client against a tiny HTTP/1.1 server on 127.0.0.1 in this process (a thread that
// answers from a script), so that redirects, bodies and connection reuse are real.
#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "celos/http_client.h"

namespace celos {
namespace {

struct SeenRequest {
  std::string method, target, body, headers;
};

class TinyServer {
 public:
  using Script = std::function<std::string(const SeenRequest&)>;

  explicit TinyServer(Script script) : script_(std::move(script)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    auto* sa = reinterpret_cast<sockaddr*>(&addr);
    REQUIRE(::bind(listener_, sa, len) == 0);
    REQUIRE(::listen(listener_, 8) == 0);
    REQUIRE(::getsockname(listener_, sa, &len) == 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }

  ~TinyServer() {
    ::shutdown(listener_, SHUT_RDWR);
    if (int fd = client_.load(); fd >= 0) ::shutdown(fd, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
  }

  std::string url(const std::string& target) const {
    return fmt::format("http://127.0.0.1:{}{}", port_, target);
  }
  int connections() const { return connections_; }
  std::vector<SeenRequest> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void serve() {
    for (;;) {
      int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      ++connections_;
      client_ = fd;
      // One connection at a time is enough for a single-threaded client.
      std::string buffer;
      while (auto request = read_request(fd, buffer)) {
        {
          std::lock_guard lock(mutex_);
          requests_.push_back(*request);
        }
        std::string response = script_(*request);
        if (::send(fd, response.data(), response.size(), MSG_NOSIGNAL) < 0) break;
      }
      client_ = -1;
      ::close(fd);
    }
  }

  static std::optional<SeenRequest> read_request(int fd, std::string& buffer) {
    auto fill = [&]() {
      char chunk[4096];
      ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return false;
      buffer.append(chunk, static_cast<size_t>(n));
      return true;
    };
    size_t end;
    while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return std::nullopt;
    }
    SeenRequest r;
    std::string head = buffer.substr(0, end);
    auto sp1 = head.find(' ');
    auto sp2 = head.find(' ', sp1 + 1);
    r.method = head.substr(0, sp1);
    r.target = head.substr(sp1 + 1, sp2 - sp1 - 1);
    r.headers = head;
    size_t length = 0;
    if (auto at = head.find("Content-Length: "); at != std::string::npos) {
      length = std::stoul(head.substr(at + 16));
    }
    while (buffer.size() < end + 4 + length) {
      if (!fill()) return std::nullopt;
    }
    r.body = buffer.substr(end + 4, length);
    buffer.erase(0, end + 4 + length);
    return r;
  }

  Script script_;
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int> connections_{0};
  std::atomic<int> client_{-1};
  std::mutex mutex_;
  std::vector<SeenRequest> requests_;
};

std::string reply(int status, const std::string& body, const std::string& extra = "") {
  return fmt::format("HTTP/1.1 {} X\r\nContent-Length: {}\r\n{}\r\n{}", status, body.size(), extra,
                     body);
}

TEST_CASE("The curl client sends method, headers and body and returns status, headers, body") {
  TinyServer server([](const SeenRequest& r) {
    return reply(201, "got " + r.method + " " + r.body, "X-Echo: yes\r\n");
  });
  auto http = make_curl_http_client();
  HttpRequest request{"PUT", server.url("/a?b=c"), {{"Content-Type", "text/plain"}}, "data"};
  auto r = http->send(request);
  REQUIRE(r);
  CHECK(r->status == 201);
  CHECK(r->body == "got PUT data");
  CHECK(r->header("x-echo") == "yes");
  auto seen = server.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].target == "/a?b=c");
  CHECK(seen[0].headers.find("Content-Type: text/plain") != std::string::npos);
}

TEST_CASE("The curl client reuses its connection for the next request") {
  TinyServer server([](const SeenRequest&) { return reply(200, "ok"); });
  auto http = make_curl_http_client();
  for (int i = 0; i < 3; ++i) {
    auto r = http->send(HttpRequest{"GET", server.url("/x"), {}, "", false});
    REQUIRE(r);
    CHECK(r->status == 200);
  }
  CHECK(server.requests().size() == 3);
  CHECK(server.connections() == 1);
}

TEST_CASE("The curl client follows redirects only when asked") {
  TinyServer server([&](const SeenRequest& r) {
    if (r.target == "/from") return reply(307, "", "Location: /to\r\n");
    return reply(200, "arrived");
  });
  auto http = make_curl_http_client();
  auto stay = http->send(HttpRequest{"GET", server.url("/from"), {}, "", false});
  REQUIRE(stay);
  CHECK(stay->status == 307);
  CHECK(stay->header("Location") == "/to");
  auto follow = http->send(HttpRequest{"GET", server.url("/from"), {}, "", true});
  REQUIRE(follow);
  CHECK(follow->status == 200);
  CHECK(follow->body == "arrived");
  CHECK(follow->header("Location") == "");  // only the last response's headers
}

TEST_CASE("A refused connection is an error naming the method and URL") {
  int port = 0;
  {
    TinyServer closed([](const SeenRequest&) { return reply(200, ""); });
    port = std::stoi(closed.url("").substr(17));
  }
  auto http = make_curl_http_client();
  std::string url = fmt::format("http://127.0.0.1:{}/webhdfs/v1/x", port);
  auto r = http->send(HttpRequest{"DELETE", url, {}, "", false});
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("DELETE " + url + " failed: ") == 0);
}

TEST_CASE("stream hands a 2xx body over as it arrives, and a cancel ends it at once") {
  // The answer's first chunk, then nothing: the connection stays open, as a watch's does.
  TinyServer server([](const SeenRequest&) {
    return std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello\n\r\n");
  });
  auto http = make_curl_http_client();
  auto cancel = std::make_shared<HttpCancel>();
  std::mutex mutex;
  std::string got;
  int status = 0;
  HttpStreamOptions options;
  options.on_status = [&](int s) { status = s; };
  options.on_data = [&](std::string_view data) {
    std::lock_guard lock(mutex);
    got.append(data);
    return true;
  };
  options.cancel = cancel;
  std::optional<Result<HttpResponse>> result;
  std::thread reader([&] {
    result = http->stream(HttpRequest{"GET", server.url("/w"), {}, "", false}, options);
  });
  for (int i = 0; i < 3000; ++i) {
    {
      std::lock_guard lock(mutex);
      if (got == "hello\n") break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  cancel->cancel();  // the server never ends the answer: only the cancel does
  reader.join();
  CHECK(got == "hello\n");
  CHECK(status == 200);
  REQUIRE(result);
  REQUIRE_FALSE(*result);
  CHECK(result->error().message.find("cancelled") != std::string::npos);
  // Once cancelled, a stream does not start.
  CHECK_FALSE(http->stream(HttpRequest{"GET", server.url("/w"), {}, "", false}, options));
}

TEST_CASE("stream returns another status's body whole, and on_data can end a transfer") {
  TinyServer server([](const SeenRequest& r) {
    if (r.target == "/gone") return reply(410, "expired");
    return std::string(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\na\n\r\n2\r\nb\n\r\n");
  });
  auto http = make_curl_http_client();
  std::string got;
  HttpStreamOptions options;
  options.on_data = [&](std::string_view data) {
    got.append(data);
    return false;  // enough
  };
  auto gone = http->stream(HttpRequest{"GET", server.url("/gone"), {}, "", false}, options);
  REQUIRE(gone);
  CHECK(gone->status == 410);
  CHECK(gone->body == "expired");
  CHECK(got.empty());
  auto stopped = http->stream(HttpRequest{"GET", server.url("/w"), {}, "", false}, options);
  REQUIRE(stopped);
  CHECK(stopped->status == 200);
  CHECK(got.starts_with("a\n"));  // curl may hand both chunks over in one call
}

TEST_CASE("url_encode keeps unreserved characters and percent-encodes the rest") {
  CHECK(url_encode("aZ09-_.~") == "aZ09-_.~");
  CHECK(url_encode("a b/c&d=é") == "a%20b%2Fc%26d%3D%C3%A9");
}

TEST_CASE("A response header is found by its name in any case, the first one winning") {
  HttpResponse r{200, {{"Content-Type", "a"}, {"content-type", "b"}}, ""};
  CHECK(r.header("CONTENT-TYPE") == "a");
  CHECK(r.header("Location") == "");
}

}  // namespace
}  // namespace celos
