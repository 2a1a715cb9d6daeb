// file:/sftp: URLs and the target file.
#include <charconv>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/deploy.h"

namespace celos {

namespace {

std::string strip_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

Result<std::string> absolute_path(std::string_view path, std::string_view url) {
  if (path.empty() || path.front() != '/') {
    return fail(fmt::format("'{}': the path must be absolute", url), ErrorCode::kInvalid);
  }
  return strip_trailing_slashes(std::string(path));
}

Result<Location> parse_file_url(std::string_view url) {
  std::string_view rest = url.substr(5);  // after "file:"
  if (rest.starts_with("//")) {
    rest.remove_prefix(2);
    const auto slash = rest.find('/');
    const std::string_view authority = rest.substr(0, slash);
    if (!authority.empty() && authority != "localhost") {
      return fail(fmt::format("'{}': file: URLs name no host (use sftp:// for remote hosts)", url),
                  ErrorCode::kInvalid);
    }
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  }
  auto path = absolute_path(rest, url);
  if (!path) return tl::unexpected(path.error());
  Location location;
  location.scheme = Location::Scheme::kFile;
  location.path = std::move(*path);
  return location;
}

Result<Location> parse_sftp_url(std::string_view url) {
  std::string_view rest = url.substr(7);  // after "sftp://"
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos) {
    return fail(fmt::format("'{}': an sftp: URL needs an absolute path after the host", url),
                ErrorCode::kInvalid);
  }
  std::string_view authority = rest.substr(0, slash);
  Location location;
  location.scheme = Location::Scheme::kSftp;
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    location.user = std::string(authority.substr(0, at));
    authority.remove_prefix(at + 1);
  }
  std::string_view port;
  if (authority.starts_with("[")) {  // [ipv6]:port
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      return fail(fmt::format("'{}': unclosed '[' in the host", url), ErrorCode::kInvalid);
    }
    location.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (after.starts_with(":")) port = after.substr(1);
  } else {
    const auto colon = authority.find(':');
    location.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (location.host.empty()) {
    return fail(fmt::format("'{}': an sftp: URL needs a host", url), ErrorCode::kInvalid);
  }
  if (!port.empty()) {
    int value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value <= 0 || value > 65535) {
      return fail(fmt::format("'{}': bad port '{}'", url, port), ErrorCode::kInvalid);
    }
    location.port = value;
  }
  auto path = absolute_path(rest.substr(slash), url);
  if (!path) return tl::unexpected(path.error());
  location.path = std::move(*path);
  return location;
}

}  // namespace

Result<Location> parse_location(std::string_view url) {
  if (url.starts_with("file:")) return parse_file_url(url);
  if (url.starts_with("sftp://")) return parse_sftp_url(url);
  return fail(fmt::format("'{}' is not a file: or sftp: URL", url), ErrorCode::kInvalid);
}

Location child_location(const Location& parent, std::string_view relative) {
  Location child = parent;
  child.path = (parent.path == "/" ? "" : parent.path) + "/" + std::string(relative);
  return child;
}

std::string to_string(const Location& location) {
  if (location.scheme == Location::Scheme::kFile) return "file://" + location.path;
  const bool ipv6 = location.host.find(':') != std::string::npos;
  const std::string host = ipv6 ? "[" + location.host + "]" : location.host;
  const std::string user = location.user.empty() ? "" : location.user + "@";
  const std::string port = location.port == 22 ? "" : fmt::format(":{}", location.port);
  return fmt::format("sftp://{}{}{}{}", user, host, port, location.path);
}

Result<DeployTarget> parse_deploy_target(std::string_view json, std::string_view source_name) {
  boost::json::parse_options options;
  options.allow_comments = true;
  options.allow_trailing_commas = true;
  boost::system::error_code ec;
  const boost::json::value value = boost::json::parse(json, ec, {}, options);
  if (ec) {
    return fail(fmt::format("target file {} is not valid JSON: {}", source_name, ec.message()),
                ErrorCode::kInvalid);
  }
  if (!value.is_object()) {
    return fail(fmt::format("target file {} must hold a JSON object", source_name),
                ErrorCode::kInvalid);
  }
  const boost::json::object& object = value.as_object();
  auto url_field = [&](const char* key) -> Result<std::string> {
    const boost::json::value* field = object.if_contains(key);
    if (field == nullptr) {
      return fail(fmt::format("target file {} lacks \"{}\"", source_name, key),
                  ErrorCode::kInvalid);
    }
    if (!field->is_string()) {
      return fail(fmt::format("target file {}: \"{}\" must be a string", source_name, key),
                  ErrorCode::kInvalid);
    }
    std::string url(field->as_string());
    if (auto location = parse_location(url); !location) {
      return fail(
          fmt::format("target file {}: \"{}\": {}", source_name, key, location.error().message),
          ErrorCode::kInvalid);
    }
    return url;
  };
  DeployTarget target;
  const std::pair<const char*, std::string*> fields[] = {
      {"hadoop.hdfs-site.xml", &target.hdfs_site_url},
      {"hadoop.core-site.xml", &target.core_site_url},
      {"defaults.dir.uri", &target.defaults_dir_url},
      {"workflows.dir.uri", &target.workflows_dir_url},
  };
  for (const auto& [key, out] : fields) {
    auto url = url_field(key);
    if (!url) return tl::unexpected(url.error());
    *out = std::move(*url);
  }
  return target;
}

Result<std::string> fetch_url(LocationOpener& opener, std::string_view url) {
  auto location = parse_location(url);
  if (!location) return tl::unexpected(location.error());
  auto fs = opener.open(*location);
  if (!fs) return tl::unexpected(fs.error());
  auto data = (*fs)->read(location->path);
  if (!data) {
    return fail(fmt::format("cannot read {}: {}", url, data.error().message), data.error().code);
  }
  return data;
}

}  // namespace celos
