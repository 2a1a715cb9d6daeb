// celos.oozieExternalService and celos.commandExternalService (docs/javascript-api.md); an
// Oozie service's properties may be a function of the slot, kept in the file's heap and called
// at submit time under the file's time budget. celos.slurmExternalService is in js_slurm.cc.
#include <fmt/format.h>

#include "celos/command_service.h"
#include "celos/hadoop.h"
#include "celos/mutex.h"
#include "celos/utf8.h"
#include "js/js_functions.h"
#include "js/js_objects.h"

namespace celos::js {
namespace {

// The slot as a properties function sees it (docs/javascript-api.md).
void push_slot(duk_context* ctx, const SlotId& slot) {
  const CivilTime civil = to_civil(slot.time);
  duk_push_object(ctx);
  const auto put = [&](const char* name, const std::string& value) {
    duk_push_lstring(ctx, value.data(), value.size());
    duk_put_prop_string(ctx, -2, name);
  };
  put("id", slot.workflow);
  put("workflowId", slot.workflow);
  put("time", format_time(slot.time));
  put("year", fmt::format("{:04}", civil.year));
  put("month", fmt::format("{:02}", civil.month));
  put("day", fmt::format("{:02}", civil.day));
  put("hour", fmt::format("{:02}", civil.hour));
  put("minute", fmt::format("{:02}", civil.minute));
  put("second", fmt::format("{:02}", civil.second));
}

struct PropertiesCall {
  const SlotId* slot;
  std::string key;
  std::map<std::string, std::string> result;
};

// Runs under duk_safe_call: any error of the function or of its result is caught there.
duk_ret_t call_properties_function(duk_context* ctx, void* udata) {
  auto& call = *static_cast<PropertiesCall*>(udata);
  duk_push_global_stash(ctx);
  duk_get_prop_string(ctx, -1, kFunctionsKey);
  duk_get_prop_string(ctx, -1, call.key.c_str());
  push_slot(ctx, *call.slot);
  duk_call(ctx, 1);
  call.result =
      require_properties(ctx, -1, "oozieExternalService", "the result of the properties function");
  return 0;
}

// Keeps the script's function in the heap and returns a C++ function that calls it at submit
// time, under the same time budget as the file's evaluation.
OoziePropertiesFunction keep_properties_function(duk_context* ctx, duk_idx_t idx) {
  FileScope& scope = scope_of(ctx);
  const std::string key = fmt::format("f{}", scope.properties_functions++);
  idx = duk_normalize_index(ctx, idx);
  duk_push_global_stash(ctx);
  duk_get_prop_string(ctx, -1, kFunctionsKey);
  duk_dup(ctx, idx);
  duk_put_prop_string(ctx, -2, key.c_str());
  duk_pop_2(ctx);
  scope.keeps_heap = true;
  std::shared_ptr<JsHeap> heap = scope.heap.lock();
  const auto budget = scope.settings.max_eval_time;
  return [heap, key, budget](const SlotId& slot) -> Result<std::map<std::string, std::string>> {
    MutexLock lock(heap->mutex());
    duk_context* context = heap->context();
    PropertiesCall call{&slot, key, {}};
    heap->arm(budget);
    const duk_int_t rc = duk_safe_call(context, call_properties_function, &call, 0, 1);
    std::string message =
        rc == DUK_EXEC_SUCCESS ? "" : cesu8_to_utf8(duk_safe_to_string(context, -1));
    duk_pop(context);
    const bool timed_out = heap->timed_out();
    heap->disarm();
    // Objects made by celos.* calls inside the function are not needed any more.
    scope_of(context).objects.clear();
    if (timed_out) {
      return fail(fmt::format("properties function of {} did not return within {} ms",
                              to_string(slot), budget.count()));
    }
    if (rc != DUK_EXEC_SUCCESS) {
      return fail(fmt::format("properties function of {} failed: {}", to_string(slot), message));
    }
    return std::move(call.result);
  };
}

}  // namespace

duk_ret_t oozie_external_service(duk_context* ctx) {
  const char* fn = "oozieExternalService";
  FileScope& scope = scope_of(ctx);
  OoziePropertiesFunction properties;
  if (duk_is_function(ctx, 0)) {
    properties = keep_properties_function(ctx, 0);
  } else {
    auto fixed = require_properties(ctx, 0, fn, "argument properties");
    properties = [fixed](const SlotId&) -> Result<std::map<std::string, std::string>> {
      return fixed;
    };
  }
  std::string url;
  if (!is_missing(ctx, 1)) {
    url = require_string(ctx, 1, fn, "argument oozieUrl");
  } else {
    push_global(ctx, "CELOS_DEFAULT_OOZIE");
    if (!is_missing(ctx, -1)) url = require_string(ctx, -1, fn, "CELOS_DEFAULT_OOZIE");
    duk_pop(ctx);
  }
  std::map<std::string, std::string> defaults;
  push_global(ctx, "CELOS_DEFAULT_OOZIE_PROPERTIES");
  if (!is_missing(ctx, -1)) {
    defaults = require_properties(ctx, -1, fn, "CELOS_DEFAULT_OOZIE_PROPERTIES");
  }
  duk_pop(ctx);
  if (!scope.settings.oozie_notification_url.empty()) {  // issue 28: Oozie calls back at its end
    defaults.emplace(std::string(kOozieNotificationProperty),
                     scope.settings.oozie_notification_url);
  }
  push_celos_object(ctx,
                    make_js_oozie_service(scope.settings.http, std::move(url), std::move(defaults),
                                          std::move(properties), scope.settings.oozie_user));
  return 1;
}

duk_ret_t command_external_service(duk_context* ctx) {
  const char* fn = "commandExternalService";
  FileScope& scope = scope_of(ctx);
  CommandServiceOptions options;
  options.command = require_string(ctx, 0, fn, "argument command");
  if (options.command.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw_error(ctx, "celos.commandExternalService: argument command must not be empty");
  }
  options.db_dir = scope.settings.db_dir;
  options.jobs_dir = scope.settings.jobs_dir;  // empty: <db>/jobs
  if (!is_missing(ctx, 1)) {
    if (!is_plain_object(ctx, 1)) {
      throw_error(ctx, fmt::format("celos.{}: argument options must be an object, got {}", fn,
                                   type_of(ctx, 1)));
    }
    duk_enum(ctx, 1, DUK_ENUM_OWN_PROPERTIES_ONLY);
    while (duk_next(ctx, -1, 1)) {
      const std::string name = duk_to_string(ctx, -2);
      if (name == "env") {
        if (!is_missing(ctx, -1)) options.env = require_properties(ctx, -1, fn, "options.env");
      } else if (name == "cwd") {
        if (!is_missing(ctx, -1)) options.cwd = require_string(ctx, -1, fn, "options.cwd");
      } else {
        throw_error(ctx,
                    fmt::format("celos.{}: unknown option \"{}\" (known: env, cwd)", fn, name));
      }
      duk_pop_2(ctx);
    }
    duk_pop(ctx);
  }
  push_celos_object(ctx, make_command_external_service(std::move(options)));
  return 1;
}

}  // namespace celos::js
