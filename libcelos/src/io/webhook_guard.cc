#include "celos/webhook_guard.h"

#include <algorithm>
#include <cctype>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace celos {
namespace {

std::string lower_url(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string numeric(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address->sa_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text,
                sizeof text);
  } else if (address->sa_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, text,
                sizeof text);
  }
  return text;
}

std::vector<std::string> system_resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::vector<std::string> out;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return out;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) out.push_back(numeric(a->ai_addr));
  ::freeaddrinfo(found);
  return out;
}

std::vector<std::string> system_local_addresses() {
  ifaddrs* list = nullptr;
  std::vector<std::string> out;
  if (::getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr != nullptr) out.push_back(numeric(i->ifa_addr));
  }
  ::freeifaddrs(list);
  return out;
}

// Loopback or unspecified, as numeric text.
bool local_only(const std::string& address) {
  in_addr v4{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    const std::uint32_t a = ntohl(v4.s_addr);
    return (a >> 24) == 127 || a == 0;
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, address.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6) || IN6_IS_ADDR_UNSPECIFIED(&v6)) return true;
  if (IN6_IS_ADDR_V4MAPPED(&v6))
    return v6.s6_addr[12] == 127 ||
           (v6.s6_addr[12] | v6.s6_addr[13] | v6.s6_addr[14] | v6.s6_addr[15]) == 0;
  return false;
}

bool listed(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

std::optional<UrlEndpoint> url_endpoint(const std::string& url) {
  UrlEndpoint e;
  std::string rest;
  if (lower_url(url.substr(0, 7)) == "http://") {
    e.port = 80;
    rest = url.substr(7);
  } else if (lower_url(url.substr(0, 8)) == "https://") {
    e.port = 443;
    rest = url.substr(8);
  } else {
    return std::nullopt;
  }
  std::string authority = rest.substr(0, rest.find_first_of("/?#"));
  if (auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  std::string port;
  if (!authority.empty() && authority[0] == '[') {
    const auto close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    e.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':')
      port = authority.substr(close + 2);
  } else {
    const auto colon = authority.rfind(':');
    e.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (!port.empty()) {
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), ::isdigit)) return std::nullopt;
    e.port = std::stoi(port);
  }
  e.host = lower_url(e.host);
  while (!e.host.empty() && e.host.back() == '.') e.host.pop_back();  // "localhost."
  if (e.host.empty()) return std::nullopt;
  return e;
}

std::optional<std::string> webhook_refusal(const std::string& url,
                                           const WebhookGuardOptions& options) {
  if (options.allow_loopback) return std::nullopt;
  const auto endpoint = url_endpoint(url);
  if (!endpoint) return std::nullopt;  // not http(s): the send fails on its own
  const auto& resolve = options.resolve ? options.resolve : system_resolve;
  const bool loopback_name =
      endpoint->host == "localhost" || endpoint->host.ends_with(".localhost");
  std::vector<std::string> addresses = resolve(endpoint->host);
  for (const std::string& address : addresses) {
    if (loopback_name || local_only(address)) {
      return fmt::format("{} is a loopback address{}", endpoint->host,
                         address == endpoint->host ? "" : " (" + address + ")");
    }
  }
  if (loopback_name) return fmt::format("{} is a loopback address", endpoint->host);
  if (options.own_port == 0 || endpoint->port != options.own_port) return std::nullopt;
  for (const std::string& own : options.own_hosts) {
    if (lower_url(own) == endpoint->host)
      return fmt::format("{} is this celos server", endpoint->host);
  }
  const auto local = options.local_addresses ? options.local_addresses() : system_local_addresses();
  for (const std::string& address : addresses) {
    if (listed(local, address)) {
      return fmt::format("{}:{} is this celos server ({} is an address of this machine)",
                         endpoint->host, endpoint->port, address);
    }
  }
  return std::nullopt;
}

}  // namespace celos
