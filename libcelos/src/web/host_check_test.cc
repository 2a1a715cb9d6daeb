#include "celos/host_check.h"

#include <catch2/catch.hpp>

namespace {

using namespace celos;

HttpServerRequest request(std::string host, std::string origin = "") {
  HttpServerRequest r;
  r.method = "POST";
  if (!host.empty()) r.headers["host"] = std::move(host);
  if (!origin.empty()) r.headers["origin"] = std::move(origin);
  return r;
}

TEST_CASE("Host headers are compared without port and case") {
  CHECK(host_without_port("LocalHost:8080") == "localhost");
  CHECK(host_without_port("[::1]:8080") == "::1");
  CHECK(host_without_port("::1") == "::1");
  CHECK(url_host("http://Example.com:1/x?y") == "example.com");
  CHECK(url_host("null").empty());
}

TEST_CASE("The default policy allows loopback names and the listen address, nothing else") {
  const HostPolicy policy = default_host_policy("10.1.2.3", "http://celos.example.com:8080");
  CHECK_FALSE(check_host_and_origin(policy, request("localhost:8080"), true));
  CHECK_FALSE(check_host_and_origin(policy, request("127.0.0.1:1"), false));
  CHECK_FALSE(check_host_and_origin(policy, request("[::1]:1"), false));
  CHECK_FALSE(check_host_and_origin(policy, request("10.1.2.3"), false));
  CHECK_FALSE(check_host_and_origin(policy, request("celos.example.com"), false));
  const auto rebinding = check_host_and_origin(policy, request("evil.example.org:8080"), false);
  REQUIRE(rebinding);
  CHECK(rebinding->find("evil.example.org") != std::string::npos);
  CHECK_FALSE(check_host_and_origin(policy, request(""), false));  // HTTP/1.0 without Host
}

TEST_CASE("A mutating request from a foreign Origin is refused, reads and no Origin are not") {
  const HostPolicy policy = default_host_policy("127.0.0.1", "");
  CHECK(check_host_and_origin(policy, request("localhost:1", "http://evil.example.org"), true));
  CHECK(check_host_and_origin(policy, request("localhost:1", "null"), true));
  CHECK_FALSE(
      check_host_and_origin(policy, request("localhost:1", "http://evil.example.org"), false));
  CHECK_FALSE(check_host_and_origin(policy, request("localhost:1", "http://localhost:9"), true));
  CHECK_FALSE(check_host_and_origin(policy, request("localhost:1"), true));
}

TEST_CASE(
    "the allowed-hosts option replaces the list, * allows any Host but still refuses foreign "
    "Origins") {
  auto listed = parse_allowed_hosts("celos.example.com, Other:99");
  REQUIRE(listed);
  CHECK(listed->hosts == std::set<std::string>{"celos.example.com", "other"});
  CHECK(check_host_and_origin(*listed, request("localhost"), false));
  auto any = parse_allowed_hosts("*");
  REQUIRE(any);
  CHECK_FALSE(check_host_and_origin(*any, request("whatever.example"), false));
  CHECK(check_host_and_origin(*any, request("a.example", "http://b.example"), true));
  CHECK_FALSE(check_host_and_origin(*any, request("a.example:1", "http://a.example:2"), true));
  CHECK_FALSE(parse_allowed_hosts("a,,b"));
  CHECK_FALSE(parse_allowed_hosts(""));
}

TEST_CASE("Loopback addresses are told from others") {
  CHECK(is_loopback("127.0.0.1"));
  CHECK(is_loopback("localhost"));
  CHECK(is_loopback("::1"));
  CHECK_FALSE(is_loopback("0.0.0.0"));
  CHECK_FALSE(is_loopback("10.0.0.1"));
}

}  // namespace

namespace celos {
TEST_CASE("a handler behind the host check refuses foreign Hosts and cross-site POSTs") {
  int served = 0;
  HttpHandler guarded =
      with_host_check(default_host_policy("127.0.0.1", ""), [&served](const HttpServerRequest&) {
        ++served;
        return HttpServerResponse{};
      });
  HttpServerRequest get;
  get.method = "GET";
  get.target = "/ui";
  get.headers = {{"host", "127.0.0.1:8081"}};
  CHECK(guarded(get).status == 200);
  HttpServerRequest rebinding = get;
  rebinding.headers = {{"host", "evil.example:8081"}};
  CHECK(guarded(rebinding).status == 403);
  HttpServerRequest post = get;
  post.method = "POST";
  post.target = "/rerun?id=wf@2015-09-13T13:00Z";
  post.headers = {{"host", "127.0.0.1:8081"}, {"origin", "http://evil.example"}};
  CHECK(guarded(post).status == 403);
  post.headers = {{"host", "127.0.0.1:8081"}, {"origin", "http://127.0.0.1:8081"}};
  CHECK(guarded(post).status == 200);
  CHECK(served == 2);
}
}  // namespace celos
