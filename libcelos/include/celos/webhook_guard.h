// Which webhooks celos refuses to call (issue 33): a workflow file could otherwise make the
// server call its own API (e.g. pause the scheduler) or other services on its loopback
// interface, with the server's network position.
//
// Refused, unless `allow_loopback` (--allow-loopback-webhooks):
//   - a host that is or resolves to a loopback address (127.0.0.0/8, ::1, ::ffff:127.x) or to
//     the unspecified address (0.0.0.0, ::: Linux connects it to the local host), any port;
//   - this server itself: a URL at this server's port whose host is one of its names or
//     resolves to an address of one of this machine's interfaces.
// Checked when a notification is sent (a name may resolve differently later); a refusal is
// logged with the reason, counted (celos_webhooks_refused_total) and not retried.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace celos {

struct WebhookGuardOptions {
  bool allow_loopback = false;
  int own_port = 0;                    // this server's port (0: not known, not checked)
  std::vector<std::string> own_hosts;  // names of this server: --host, the advertised host, ...
  // The addresses a host name resolves to (numeric text); empty = getaddrinfo.
  std::function<std::vector<std::string>(const std::string& host)> resolve = {};
  // The addresses of this machine's interfaces (numeric text); empty = getifaddrs.
  std::function<std::vector<std::string>()> local_addresses = {};
};

// Host and port of an http(s) URL ("http://[::1]:8080/x" -> "::1", 8080; the scheme's default
// port when none is given); nothing when it is not an http(s) URL with a host.
struct UrlEndpoint {
  std::string host;
  int port = 0;
};
std::optional<UrlEndpoint> url_endpoint(const std::string& url);

// The reason `url` must not be called, or nothing.
std::optional<std::string> webhook_refusal(const std::string& url,
                                           const WebhookGuardOptions& options);

}  // namespace celos
