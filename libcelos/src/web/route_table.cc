#include "celos/route_table.h"

#include <stdexcept>

namespace celos {
namespace {

std::string_view trim_slash(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path;
}

std::vector<std::string> segments(std::string_view path) {
  std::vector<std::string> out;
  while (!path.empty()) {
    if (path.front() == '/') path.remove_prefix(1);
    const auto slash = path.find('/');
    out.emplace_back(path.substr(0, slash));
    path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash);
  }
  return out;
}

bool is_template(const std::string& segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

bool matches(const std::vector<std::string>& pattern, const std::vector<std::string>& parts,
             std::map<std::string, std::string>& params) {
  if (pattern.size() != parts.size()) return false;
  std::map<std::string, std::string> found;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (is_template(pattern[i])) {
      if (parts[i].empty()) return false;
      found[pattern[i].substr(1, pattern[i].size() - 2)] = parts[i];
    } else if (pattern[i] != parts[i]) {
      return false;
    }
  }
  params = std::move(found);
  return true;
}

}  // namespace

std::string_view to_string(Role role) {
  switch (role) {
    case Role::kPublic:
      return "public";
    case Role::kViewer:
      return "viewer";
    case Role::kOperator:
      return "operator";
    case Role::kAdmin:
      return "admin";
  }
  return "admin";
}

std::vector<std::string> served_paths(const Route& route) {
  switch (route.mount) {
    case Mount::kLegacyAndV1:
      return {route.path, std::string(kApiPrefix) + route.path};
    case Mount::kV1:
      return {std::string(kApiPrefix) + route.path};
    case Mount::kRoot:
      return {route.path};
  }
  return {};
}

std::vector<const Route*>& RouteTable::list_for(const std::string& path) {
  const auto parts = segments(path);
  bool templated = false;
  for (const auto& part : parts) templated = templated || is_template(part);
  if (!templated) return exact_[path];
  for (auto& [pattern, routes] : templates_) {
    if (pattern == parts) return routes;
  }
  return templates_.emplace_back(parts, std::vector<const Route*>{}).second;
}

void RouteTable::add(Route route) {
  if (route.path.empty() || route.path.front() != '/' || !route.handler) {
    throw std::logic_error("route needs a path starting with / and a handler: " + route.path);
  }
  const auto paths = served_paths(route);
  for (const std::string& path : paths) {
    for (const Route* other : list_for(path)) {
      if (other->method == route.method) {
        throw std::logic_error("route registered twice: " + route.method + " " + path);
      }
    }
  }
  const Route& added = routes_.emplace_back(std::move(route));
  for (const std::string& path : paths) list_for(path).push_back(&added);
}

RouteTable::Match RouteTable::match(std::string_view method, std::string_view path) const {
  Match match;
  path = trim_slash(path);
  if (const auto it = exact_.find(std::string(path)); it != exact_.end()) {
    match.on_path = it->second;
  } else {
    const auto parts = segments(path);
    for (const auto& [pattern, routes] : templates_) {
      if (matches(pattern, parts, match.path_params)) {
        match.on_path = routes;
        break;
      }
    }
  }
  for (const Route* route : match.on_path) {
    if (route->method == method) match.route = route;
  }
  return match;
}

}  // namespace celos
