// The celos.* functions that js_api.cc's table installs, by the file that defines them (more
// in js_scope.h: slurmExternalService, dataset, statusTrigger). Each is a Duktape C function: it
// validates its arguments (a wrong one throws a TypeError naming the function and the
// argument), builds the C++ object with the factories of include/celos, and hands the script a
// handle to it (js_objects.h). Internal.
//
// Duktape is compiled as C++ here: duk_error() unwinds with a C++ exception, so locals with
// destructors are fine, but these functions must never `catch (...)`.
#pragma once

#include <duktape.h>

namespace celos::js {

// Where properties functions are kept (in the global stash) while their heap lives.
inline constexpr const char* kFunctionsKey = "celosPropertiesFunctions";

// js_workflow.cc: defineWorkflow (magic 0) and addWorkflow (magic 1), importDefaults.
duk_ret_t define_workflow(duk_context* ctx);
duk_ret_t import_defaults(duk_context* ctx);

// js_schedules.cc: schedules, scheduling strategies and triggers.
duk_ret_t hourly_schedule(duk_context* ctx);
duk_ret_t minutely_schedule(duk_context* ctx);
duk_ret_t cron_schedule(duk_context* ctx);
duk_ret_t dependent_schedule(duk_context* ctx);
duk_ret_t serial_strategy(duk_context* ctx);
duk_ret_t always_trigger(duk_context* ctx);
duk_ret_t hdfs_check_trigger(duk_context* ctx);
duk_ret_t success_trigger(duk_context* ctx);
duk_ret_t and_trigger(duk_context* ctx);
duk_ret_t or_trigger(duk_context* ctx);
duk_ret_t not_trigger(duk_context* ctx);
duk_ret_t offset_trigger(duk_context* ctx);
duk_ret_t delay_trigger(duk_context* ctx);

// js_services.cc: oozieExternalService (with properties functions) and commandExternalService.
duk_ret_t oozie_external_service(duk_context* ctx);
duk_ret_t command_external_service(duk_context* ctx);

}  // namespace celos::js
