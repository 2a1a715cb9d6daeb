// celos.kubernetesExternalService(options) (issue 30, docs/javascript-api.md). Every field is
// checked here, so a bad one is a load error naming the function and the field (the loader adds
// the file and the line); loading reads no kubeconfig and calls no API server.
//
// Like js_api.cc, these are Duktape C functions compiled as C++: errors unwind as C++
// exceptions, so they must never `catch (...)`.
#include <cstdlib>
#include <functional>

#include <fmt/format.h>

#include "celos/kubernetes_service.h"
#include "js/js_args.h"
#include "js/js_scope.h"

namespace celos::js {
namespace {

constexpr const char* kKubernetesFn = "kubernetesExternalService";
constexpr const char* kKubernetesKnown =
    "namespace, image, command, args, env, resources, serviceAccount, nodeSelector, labels, "
    "ttlSecondsAfterFinished, kubeconfig, context, inCluster";

[[noreturn]] void bad(duk_context* ctx, const std::string& field, const std::string& why) {
  throw_error(ctx, fmt::format("celos.{}: field \"{}\" {}", kKubernetesFn, field, why));
}

std::string non_empty(duk_context* ctx, const std::string& field) {
  std::string value = require_string(ctx, -1, kKubernetesFn, "field \"" + field + "\"");
  if (value.empty() || value.find_first_of("\r\n") != std::string::npos) {
    bad(ctx, field, "must be a non-empty string on one line");
  }
  return value;
}

std::vector<std::string> duk_string_list(duk_context* ctx, const std::string& field) {
  if (!duk_is_array(ctx, -1)) bad(ctx, field, "must be a list of strings, got " + type_of(ctx, -1));
  std::vector<std::string> out;
  const auto length = duk_get_length(ctx, -1);
  for (duk_uarridx_t i = 0; i < length; ++i) {
    duk_get_prop_index(ctx, -1, i);
    out.push_back(
        require_string(ctx, -1, kKubernetesFn, fmt::format("field \"{}[{}]\"", field, i)));
    duk_pop(ctx);
  }
  return out;
}

std::map<std::string, std::string> env_of(duk_context* ctx) {
  auto env = require_properties(ctx, -1, kKubernetesFn, "field \"env\"");
  for (const auto& [name, value] : env) {
    const bool ok = !name.empty() && name.find_first_of("=\0", 0, 2) == std::string::npos &&
                    !(name[0] >= '0' && name[0] <= '9');
    if (!ok) bad(ctx, "env", fmt::format("has an invalid variable name \"{}\"", name));
  }
  return env;
}

std::map<std::string, std::string> labels_of(duk_context* ctx, const std::string& field) {
  auto labels = require_properties(ctx, -1, kKubernetesFn, "field \"" + field + "\"");
  for (const auto& [key, value] : labels) {
    if (auto ok = validate_kube_label(key, value); !ok) bad(ctx, field, ok.error().message);
    if (field == "labels" && (key == "celos.workflow" || key == "celos.slot")) {
      bad(ctx, field, fmt::format("must not set \"{}\": celos sets it", key));
    }
  }
  return labels;
}

void resources_of(duk_context* ctx, KubernetesServiceOptions& options) {
  if (!is_plain_object(ctx, -1))
    bad(ctx, "resources", "must be an object, got " + type_of(ctx, -1));
  duk_enum(ctx, -1, DUK_ENUM_OWN_PROPERTIES_ONLY);
  while (duk_next(ctx, -1, 1)) {
    const std::string key = duk_to_string(ctx, -2);
    const std::string field = "resources." + key;
    if (key != "cpu" && key != "memory") {
      bad(ctx, field, "is not known (known: cpu, memory)");
    }
    if (!duk_is_string(ctx, -1) && !duk_is_number(ctx, -1)) {
      bad(ctx, field,
          "must be a quantity string such as \"500m\" or \"1Gi\", got " + type_of(ctx, -1));
    }
    const std::string value = duk_to_string(ctx, -1);
    if (auto ok = validate_kube_quantity(value); !ok) bad(ctx, field, ok.error().message);
    (key == "cpu" ? options.cpu : options.memory) = value;
    duk_pop_2(ctx);
  }
  duk_pop(ctx);
}

void read_field(duk_context* ctx, const std::string& name, KubernetesServiceOptions& o) {
  using Reader = std::function<void()>;
  const std::map<std::string, Reader> readers = {
      {"namespace", [&] { o.namespace_ = non_empty(ctx, name); }},
      {"image", [&] { o.image = non_empty(ctx, name); }},
      {"command", [&] { o.command = duk_string_list(ctx, name); }},
      {"args", [&] { o.args = duk_string_list(ctx, name); }},
      {"env", [&] { o.env = env_of(ctx); }},
      {"resources", [&] { resources_of(ctx, o); }},
      {"serviceAccount", [&] { o.service_account = non_empty(ctx, name); }},
      {"nodeSelector", [&] { o.node_selector = labels_of(ctx, name); }},
      {"labels", [&] { o.labels = labels_of(ctx, name); }},
      {"ttlSecondsAfterFinished",
       [&] {
         o.ttl_seconds_after_finished =
             require_integer(ctx, -1, kKubernetesFn, "field \"" + name + "\"", 0);
       }},
      {"kubeconfig", [&] { o.kubeconfig = non_empty(ctx, name); }},
      {"context", [&] { o.context = non_empty(ctx, name); }},
      {"inCluster",
       [&] {
         if (!duk_is_boolean(ctx, -1))
           bad(ctx, name, "must be true or false, got " + type_of(ctx, -1));
         o.in_cluster = duk_get_boolean(ctx, -1) != 0;
       }},
  };
  auto reader = readers.find(name);
  if (reader == readers.end()) {
    throw_error(ctx, fmt::format("celos.{}: unknown field \"{}\" (known: {})", kKubernetesFn, name,
                                 kKubernetesKnown));
  }
  if (!is_missing(ctx, -1)) reader->second();
}

void check(duk_context* ctx, KubernetesServiceOptions& o) {
  if (o.image.empty())
    throw_error(ctx, fmt::format("celos.{}: field \"image\" is required", kKubernetesFn));
  if (!o.namespace_.empty() && !is_dns_label(o.namespace_)) {
    bad(ctx, "namespace",
        fmt::format("\"{}\" is not a namespace name (at most 63 of a-z 0-9 -)", o.namespace_));
  }
  if (!o.service_account.empty() && !is_dns_label(o.service_account)) {
    bad(ctx, "serviceAccount",
        fmt::format("\"{}\" is not a service account name", o.service_account));
  }
  if (o.in_cluster && (!o.kubeconfig.empty() || !o.context.empty())) {
    bad(ctx, "inCluster", "cannot be true together with kubeconfig or context");
  }
  if (!o.in_cluster && o.kubeconfig.empty()) {  // as kubectl: $KUBECONFIG, else ~/.kube/config
    const char* env = std::getenv("KUBECONFIG");
    const char* home = std::getenv("HOME");
    std::string first = env ? std::string(env).substr(0, std::string(env).find(':')) : "";
    o.kubeconfig = !first.empty() ? first : std::string(home ? home : "") + "/.kube/config";
  }
}

}  // namespace

duk_ret_t kubernetes_external_service_js(duk_context* ctx) {
  const EvalSettings& settings = scope_of(ctx).settings;
  if (!is_plain_object(ctx, 0)) {
    throw_error(ctx, fmt::format("celos.{}: argument options must be an object, got {}",
                                 kKubernetesFn, type_of(ctx, 0)));
  }
  KubernetesServiceOptions options;
  duk_enum(ctx, 0, DUK_ENUM_OWN_PROPERTIES_ONLY);
  while (duk_next(ctx, -1, 1)) {
    const std::string name = duk_to_string(ctx, -2);
    read_field(ctx, name, options);
    duk_pop_2(ctx);
  }
  duk_pop(ctx);
  check(ctx, options);
  options.timeout = settings.io_timeout;
  push_external_service(
      ctx, make_kubernetes_external_service(std::move(options), settings.kubernetes_http));
  return 1;
}

}  // namespace celos::js
