// Kubeconfig and in-cluster credentials (celos/kubernetes_service.h). Only what a client of the
// REST API needs: the server, a bearer token (inline or a file), a client certificate and key,
// a CA (files or base64 *-data), the context's namespace. exec/auth-provider plugins are
// refused with a message, since celos runs no credential helpers.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/kubernetes_service.h"
#include "io/kubernetes/kube_yaml.h"

namespace celos {
namespace {

namespace json = boost::json;

std::optional<std::string> read_optional_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<std::string> base64_decode(const std::string& text) {
  std::string out;
  unsigned value = 0;
  int bits = 0;
  for (char c : text) {
    int digit = -1;
    if (c >= 'A' && c <= 'Z') digit = c - 'A';
    if (c >= 'a' && c <= 'z') digit = c - 'a' + 26;
    if (c >= '0' && c <= '9') digit = c - '0' + 52;
    if (c == '+' || c == '-') digit = 62;
    if (c == '/' || c == '_') digit = 63;
    if (c == '=' || c == ' ' || c == '\n' || c == '\r') continue;
    if (digit < 0) return fail("not base64", ErrorCode::kInvalid);
    value = (value << 6) | static_cast<unsigned>(digit);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((value >> bits) & 0xff);
    }
  }
  return out;
}

std::string string_of(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

// The entry `name` of a kubeconfig list (`clusters`, `users`, `contexts`): its inner object.
const json::object* named(const json::object& config, std::string_view list,
                          const std::string& name, std::string_view inner) {
  const json::value* entries = config.if_contains(list);
  if (!entries || !entries->is_array()) return nullptr;
  for (const json::value& entry : entries->as_array()) {
    if (!entry.is_object() || string_of(entry.as_object(), "name") != name) continue;
    const json::value* value = entry.as_object().if_contains(inner);
    static const json::object kEmpty;
    return value && value->is_object() ? &value->as_object() : &kEmpty;
  }
  return nullptr;
}

std::string relative_to(const std::string& path, const std::string& file) {
  if (file.empty() || file[0] == '/') return file;
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? file : path.substr(0, slash + 1) + file;
}

// One of `<key>` (a file) or `<key>-data` (base64 PEM) into file / pem.
Result<void> file_or_data(const json::object& o, const std::string& key, const std::string& path,
                          std::string& file, std::string& pem) {
  file = relative_to(path, string_of(o, key));
  const std::string data = string_of(o, key + "-data");
  if (data.empty()) return {};
  auto decoded = base64_decode(data);
  if (!decoded)
    return fail(fmt::format("{}: {}-data is not base64", path, key), ErrorCode::kInvalid);
  pem = std::move(*decoded);
  return {};
}

Result<void> read_user(const json::object& user, const std::string& path, KubeCredentials& out) {
  if (user.contains("exec") || user.contains("auth-provider")) {
    return fail(fmt::format("{}: the user of context uses an exec or auth-provider plugin, which "
                            "celos does not run: give it a token or a client certificate",
                            path),
                ErrorCode::kInvalid);
  }
  out.token = string_of(user, "token");
  out.token_file = relative_to(path, string_of(user, "tokenFile"));
  if (auto ok = file_or_data(user, "client-certificate", path, out.cert_file, out.cert_pem); !ok) {
    return ok;
  }
  return file_or_data(user, "client-key", path, out.key_file, out.key_pem);
}

}  // namespace

Result<KubeCredentials> parse_kubeconfig(const std::string& text, const std::string& path,
                                         const std::string& context) {
  auto parsed = kube::parse_yaml(text);
  if (!parsed)
    return fail(fmt::format("{}: {}", path, parsed.error().message), ErrorCode::kInvalid);
  if (!parsed->is_object())
    return fail(path + ": not a kubeconfig (no mapping)", ErrorCode::kInvalid);
  const json::object& config = parsed->as_object();
  const std::string name = context.empty() ? string_of(config, "current-context") : context;
  if (name.empty()) return fail(path + ": no current-context", ErrorCode::kInvalid);
  const json::object* ctx = named(config, "contexts", name, "context");
  if (!ctx) return fail(fmt::format("{}: no context \"{}\"", path, name), ErrorCode::kInvalid);
  KubeCredentials out;
  out.source = fmt::format("kubeconfig {} (context {})", path, name);
  out.namespace_ = string_of(*ctx, "namespace");
  const std::string cluster_name = string_of(*ctx, "cluster");
  const json::object* cluster = named(config, "clusters", cluster_name, "cluster");
  if (!cluster) {
    return fail(
        fmt::format("{}: context \"{}\" names no known cluster (\"{}\")", path, name, cluster_name),
        ErrorCode::kInvalid);
  }
  out.server = string_of(*cluster, "server");
  while (out.server.ends_with('/')) out.server.pop_back();
  if (!out.server.starts_with("https://") && !out.server.starts_with("http://")) {
    return fail(fmt::format("{}: cluster \"{}\" has no http(s) server (\"{}\")", path, cluster_name,
                            out.server),
                ErrorCode::kInvalid);
  }
  out.insecure = string_of(*cluster, "insecure-skip-tls-verify") == "true";
  if (auto ok = file_or_data(*cluster, "certificate-authority", path, out.ca_file, out.ca_pem);
      !ok) {
    return tl::unexpected(ok.error());
  }
  const std::string user_name = string_of(*ctx, "user");
  if (!user_name.empty()) {
    const json::object* user = named(config, "users", user_name, "user");
    if (!user) {
      return fail(
          fmt::format("{}: context \"{}\" names no known user (\"{}\")", path, name, user_name),
          ErrorCode::kInvalid);
    }
    if (auto ok = read_user(*user, path, out); !ok) return tl::unexpected(ok.error());
  }
  return out;
}

Result<KubeCredentials> read_kubeconfig(const std::string& path, const std::string& context) {
  auto text = read_optional_file(path);
  if (!text) return fail(fmt::format("cannot read the kubeconfig {}", path));
  return parse_kubeconfig(*text, path, context);
}

Result<KubeCredentials> in_cluster_credentials(const std::string& dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0') {
    return fail("inCluster: KUBERNETES_SERVICE_HOST is not set (celos is not running in a pod)");
  }
  KubeCredentials out;
  const std::string h = host;
  const std::string address = h.find(':') != std::string::npos ? "[" + h + "]" : h;
  out.server = fmt::format("https://{}:{}", address, port && *port ? port : "443");
  out.token_file = dir + "/token";
  out.ca_file = dir + "/ca.crt";
  if (!read_optional_file(out.token_file)) {
    return fail(fmt::format("inCluster: cannot read the service account token {}", out.token_file));
  }
  if (auto ns = read_optional_file(dir + "/namespace")) {
    out.namespace_ = *ns;
    while (!out.namespace_.empty() &&
           std::isspace(static_cast<unsigned char>(out.namespace_.back()))) {
      out.namespace_.pop_back();
    }
  }
  out.source = "in-cluster service account " + dir;
  return out;
}

}  // namespace celos
