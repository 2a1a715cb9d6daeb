// Which webhooks are refused (celos/webhook_guard.h), with a fake resolver and interfaces.
#include "celos/webhook_guard.h"

#include <catch2/catch.hpp>

using namespace celos;

namespace {

WebhookGuardOptions guard() {
  WebhookGuardOptions o;
  o.own_port = 8080;
  o.own_hosts = {"celos1.example.com", "0.0.0.0"};
  o.resolve = [](const std::string& host) -> std::vector<std::string> {
    if (host == "celos1.example.com" || host == "me.example.com") return {"10.1.2.3"};
    if (host == "sneaky.example.com") return {"93.184.216.34", "127.0.0.2"};
    if (host == "hooks.example.com") return {"93.184.216.34"};
    return {host};  // numeric
  };
  o.local_addresses = [] { return std::vector<std::string>{"127.0.0.1", "10.1.2.3", "::1"}; };
  return o;
}

}  // namespace

TEST_CASE("URLs give their host and port") {
  CHECK(url_endpoint("http://[::1]:8080/x")->host == "::1");
  CHECK(url_endpoint("http://[::1]:8080/x")->port == 8080);
  CHECK(url_endpoint("HTTPS://User:pw@Hooks.Example.com/x?y")->host == "hooks.example.com");
  CHECK(url_endpoint("https://hooks.example.com/x")->port == 443);
  CHECK(url_endpoint("http://h:99999999/") == std::nullopt);
  CHECK(url_endpoint("ftp://h/") == std::nullopt);
}

TEST_CASE("Webhooks to loopback or to this server are refused, others pass") {
  const auto o = guard();
  for (const char* url : {"http://127.0.0.1:8080/api/v1/maintenance?mode=pause",
                          "http://127.9.9.9/", "http://localhost:9/", "http://LOCALHOST./x",
                          "http://[::1]:1/", "http://0.0.0.0:8080/", "http://[::ffff:127.0.0.1]/",
                          "http://sneaky.example.com/", "http://celos1.example.com:8080/",
                          "http://me.example.com:8080/api/v1/pause", "http://10.1.2.3:8080/"}) {
    INFO(url);
    CHECK(webhook_refusal(url, o));
  }
  for (const char* url : {"http://hooks.example.com/x", "https://hooks.example.com:8080/x",
                          "http://me.example.com:9090/", "http://10.1.2.3:9090/"}) {
    INFO(url);
    CHECK_FALSE(webhook_refusal(url, o));
  }
  CHECK(webhook_refusal("http://127.0.0.1:8080/", o)->find("loopback") != std::string::npos);
  CHECK(webhook_refusal("http://me.example.com:8080/", o)->find("this celos server") !=
        std::string::npos);
}

TEST_CASE("webhook guard: the allow-loopback-webhooks flag lets every webhook through") {
  auto o = guard();
  o.allow_loopback = true;
  CHECK_FALSE(webhook_refusal("http://127.0.0.1:8080/api/v1/maintenance", o));
}
