#include "celos/host_check.h"

#include <algorithm>
#include <cctype>

#include <unistd.h>

namespace celos {
namespace {

std::string lower_host(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim_header(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return std::string(text);
}

bool allowed(const HostPolicy& policy, const std::string& host) {
  return policy.any || policy.hosts.count(host) > 0;
}

}  // namespace

Result<HostPolicy> parse_allowed_hosts(std::string_view list) {
  HostPolicy policy;
  while (true) {
    const auto comma = list.find(',');
    const std::string entry = trim_header(list.substr(0, comma));
    if (entry.empty()) {
      return fail("--allowed-hosts: empty entry in \"" + std::string(list) + "\"",
                  ErrorCode::kInvalid);
    }
    if (entry == "*") {
      policy.any = true;
    } else {
      policy.hosts.insert(host_without_port(entry));
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return policy;
}

HostPolicy default_host_policy(const std::string& listen_host, const std::string& advertised_url) {
  HostPolicy policy;
  policy.hosts = {"localhost", "127.0.0.1", "::1"};
  if (!listen_host.empty()) policy.hosts.insert(host_without_port(listen_host));
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0 && name[0] != '\0')
    policy.hosts.insert(lower_host(name));
  if (const std::string host = url_host(advertised_url); !host.empty()) policy.hosts.insert(host);
  return policy;
}

std::string host_without_port(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const auto close = host.find(']');
    return lower_host(host.substr(1, close == std::string_view::npos ? host.npos : close - 1));
  }
  // An IPv6 address without brackets has several colons and no port.
  if (std::count(host.begin(), host.end(), ':') == 1) host = host.substr(0, host.find(':'));
  return lower_host(host);
}

std::string url_host(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return "";
  url.remove_prefix(scheme + 3);
  url = url.substr(0, url.find_first_of("/?#"));
  if (const auto at = url.rfind('@'); at != std::string_view::npos) url.remove_prefix(at + 1);
  return host_without_port(url);
}

bool is_loopback(std::string_view host) {
  const std::string h = host_without_port(host);
  return h == "localhost" || h == "::1" || h.rfind("127.", 0) == 0;
}

std::string node_name(int port) {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0')
    return "localhost:" + std::to_string(port);
  return std::string(name) + ":" + std::to_string(port);
}

std::optional<std::string> check_host_and_origin(const HostPolicy& policy,
                                                 const HttpServerRequest& request, bool mutating) {
  std::string host;
  if (const auto it = request.headers.find("host"); it != request.headers.end()) {
    host = host_without_port(it->second);
    if (!allowed(policy, host)) {
      return "host not allowed: " + host + " (see --allowed-hosts)";
    }
  }
  if (!mutating) return std::nullopt;
  const auto origin = request.headers.find("origin");
  if (origin == request.headers.end()) return std::nullopt;
  const std::string origin_host = url_host(origin->second);
  if (!origin_host.empty() &&
      (origin_host == host || (!policy.any && allowed(policy, origin_host)))) {
    return std::nullopt;
  }
  return "cross-origin request refused: Origin " + origin->second + " (see --allowed-hosts)";
}

HttpHandler with_host_check(HostPolicy policy, HttpHandler inner) {
  return [policy = std::move(policy), inner = std::move(inner)](const HttpServerRequest& request) {
    const bool mutating = request.method != "GET" && request.method != "HEAD";
    if (auto why = check_host_and_origin(policy, request, mutating)) return json_error(403, *why);
    return inner(request);
  };
}

}  // namespace celos
