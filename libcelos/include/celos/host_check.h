// The Host and Origin checks of both servers (SPEC §16, issue 11 item 8): they keep web pages
// a user opens from driving a celos on localhost (cross-site requests, DNS rebinding).
//
//   - a request whose Host header names a host that is not allowed: 403
//   - a mutating request whose Origin names a host that is neither allowed nor the request's
//     own Host: 403 (a request without Origin, e.g. curl or celos-ui, is allowed)
//
// Ports never matter. Host names compare case-insensitively.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "celos/error.h"
#include "celos/http_server.h"

namespace celos {

struct HostPolicy {
  bool any = false;             // --allowed-hosts '*'
  std::set<std::string> hosts;  // lower-case, without port or brackets
};

// --allowed-hosts a,b,... ('*' alone = any). kInvalid for an empty list or entry.
[[nodiscard]] Result<HostPolicy> parse_allowed_hosts(std::string_view list);

// The default: localhost, 127.0.0.1, ::1, the --host address, the machine's host name and the
// host of `advertised_url` (if not empty).
HostPolicy default_host_policy(const std::string& listen_host, const std::string& advertised_url);

// "example.com:8080" -> "example.com", "[::1]:80" -> "::1", lower-cased.
std::string host_without_port(std::string_view host_header);
// The host of a URL ("http://a.b:8080/x" -> "a.b"); empty when it has none ("null").
std::string url_host(std::string_view url);

// True for 127.x.x.x, ::1 and localhost (the start-up warning about missing tokens).
bool is_loopback(std::string_view host);
// "<machine's host name>:<port>", this server in audit records.
std::string node_name(int port);

// The reason to refuse the request (for a 403), or nothing.
std::optional<std::string> check_host_and_origin(const HostPolicy& policy,
                                                 const HttpServerRequest& request, bool mutating);

// `inner` behind the checks, for a server whose mutating requests are every method but GET and
// HEAD (celos-ui: its own POST /rerun). A refused request is a 403 JSON error.
HttpHandler with_host_check(HostPolicy policy, HttpHandler inner);

}  // namespace celos
