// The `celos` object: its table of celos.* functions (each group in a file of its own, see
// js_functions.h), the helpers replaceTimeVariables and mergeProperties, the throw hook that
// remembers the workflow file's line, and the handles of C++ objects (js_objects.h).
#include <fmt/format.h>

#include "js/js_functions.h"
#include "js/js_objects.h"

namespace celos::js {
namespace {

constexpr const char* kScopeKey = "celosScope";

// ---- helpers -----------------------------------------------------------------------------

duk_ret_t replace_time_variables_js(duk_context* ctx) {
  const char* fn = "replaceTimeVariables";
  const std::string text = require_string(ctx, 0, fn, "argument string");
  // A slot object (as given to a properties function) is accepted for its time.
  if (is_plain_object(ctx, 1))
    duk_get_prop_string(ctx, 1, "time");
  else
    duk_dup(ctx, 1);
  const std::string time_text = require_string(ctx, -1, fn, "argument time");
  auto time = parse_time(time_text);
  if (!time) throw_error(ctx, "celos.replaceTimeVariables: argument time: " + time.error().message);
  const std::string result = replace_time_variables(text, *time);
  duk_push_lstring(ctx, result.data(), result.size());
  return 1;
}

// Copies every own property of `source` into `target` (overwriting) and returns `target`.
duk_ret_t merge_properties(duk_context* ctx) {
  const char* fn = "mergeProperties";
  for (duk_idx_t i : {0, 1}) {
    if (!is_plain_object(ctx, i)) {
      throw_error(ctx, fmt::format("celos.{}: argument {} must be an object, got {}", fn,
                                   i == 0 ? "source" : "target", type_of(ctx, i)));
    }
  }
  duk_enum(ctx, 0, DUK_ENUM_OWN_PROPERTIES_ONLY);
  while (duk_next(ctx, -1, 1)) duk_put_prop(ctx, 1);
  duk_pop(ctx);
  duk_dup(ctx, 1);
  return 1;
}

// Duktape.errThrow: remembers where each value is thrown, so that a load error carries the
// line of the workflow file even when a C function threw or the value is not an Error.
duk_ret_t on_throw(duk_context* ctx) {
  FileScope& scope = scope_of(ctx);
  // A script stopped by its budget: every allocation would cost a garbage collection round.
  if (auto heap = scope.heap.lock(); heap && (heap->timed_out() || heap->refused_allocation())) {
    return 1;
  }
  scope.last_throw = current_site(ctx, scope.file_name);
  duk_dup(ctx, 0);
  return 1;
}

struct ApiFunction {
  const char* name;
  duk_c_function function;
  duk_idx_t nargs;
  duk_int_t magic = 0;
};

const ApiFunction kApi[] = {
    {"defineWorkflow", define_workflow, 1},
    {"addWorkflow", define_workflow, 1, 1},
    {"importDefaults", import_defaults, 1},
    {"hourlySchedule", hourly_schedule, 1},
    {"minutelySchedule", minutely_schedule, 1},
    {"cronSchedule", cron_schedule, 2},
    {"dependentSchedule", dependent_schedule, 1},
    {"serialSchedulingStrategy", serial_strategy, 1},
    {"alwaysTrigger", always_trigger, 0},
    {"hdfsCheckTrigger", hdfs_check_trigger, 2},
    {"successTrigger", success_trigger, 1},
    {"andTrigger", and_trigger, DUK_VARARGS},
    {"orTrigger", or_trigger, DUK_VARARGS},
    {"notTrigger", not_trigger, 1},
    {"offsetTrigger", offset_trigger, 2},
    {"delayTrigger", delay_trigger, 1},
    {"oozieExternalService", oozie_external_service, 2},
    {"commandExternalService", command_external_service, 2},
    {"slurmExternalService", slurm_external_service_js, 2},
    {"kubernetesExternalService", kubernetes_external_service_js, 1},
    {"replaceTimeVariables", replace_time_variables_js, 2},
    {"mergeProperties", merge_properties, 2},
    {"dataset", dataset_js, 2},
    {"statusTrigger", status_trigger_js, 2},
    {"serviceLimits", service_limits_js, 2},
};

}  // namespace

FileScope& scope_of(duk_context* ctx) {
  duk_push_global_stash(ctx);
  duk_get_prop_string(ctx, -1, kScopeKey);
  auto* scope = static_cast<FileScope*>(duk_get_pointer(ctx, -1));
  duk_pop_2(ctx);
  return *scope;
}

ThrowSite current_site(duk_context* ctx, const std::string& file_name) {
  ThrowSite site;
  for (duk_int_t level = -1; level >= -64; --level) {
    duk_inspect_callstack_entry(ctx, level);
    if (duk_is_undefined(ctx, -1)) {
      duk_pop(ctx);
      break;
    }
    duk_get_prop_string(ctx, -1, "lineNumber");
    const int line = duk_get_int(ctx, -1);
    duk_get_prop_string(ctx, -2, "function");
    duk_get_prop_string(ctx, -1, "fileName");
    const char* file = duk_get_string(ctx, -1);
    const bool found = file != nullptr && file_name == file;
    if (file != nullptr && site.inner_file.empty()) {
      site.inner_file = file;
      site.inner_line = line;
    }
    duk_pop_n(ctx, 4);
    if (found) {
      site.file_line = line;
      break;
    }
  }
  return site;
}

void install_api(duk_context* ctx, FileScope& scope) {
  duk_push_global_stash(ctx);
  duk_push_pointer(ctx, &scope);
  duk_put_prop_string(ctx, -2, kScopeKey);
  duk_push_object(ctx);
  duk_put_prop_string(ctx, -2, kFunctionsKey);
  duk_pop(ctx);

  duk_push_object(ctx);
  for (const ApiFunction& api : kApi) {
    duk_push_c_function(ctx, api.function, api.nargs);
    duk_set_magic(ctx, -1, api.magic);
    duk_put_prop_string(ctx, -2, api.name);
  }
  duk_put_global_string(ctx, "celos");
  duk_push_c_function(ctx, import_defaults, 1);
  duk_put_global_string(ctx, "importDefaults");

  duk_get_global_string(ctx, "Duktape");
  duk_push_c_function(ctx, on_throw, 1);
  duk_put_prop_string(ctx, -2, "errThrow");
  duk_pop(ctx);
}

void push_celos_object(duk_context* ctx, CelosObject object) {
  FileScope& scope = scope_of(ctx);
  scope.objects.push_back(std::move(object));
  duk_push_object(ctx);
  duk_push_uint(ctx, static_cast<duk_uint_t>(scope.objects.size() - 1));
  duk_put_prop_string(ctx, -2, kObjectKey);
}

void push_trigger(duk_context* ctx, TriggerPtr trigger) {
  push_celos_object(ctx, std::move(trigger));
}

std::string defaults_path(const std::string& defaults_dir, const std::string& name) {
  return defaults_dir + "/" + name + ".js";
}

void push_external_service(duk_context* ctx, ExternalServicePtr service) {
  push_celos_object(ctx, std::move(service));
}

}  // namespace celos::js
