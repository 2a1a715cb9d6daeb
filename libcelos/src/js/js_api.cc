// The celos.* functions. Each is a Duktape C function: it validates its arguments (a wrong one
// throws a TypeError naming the function and the argument), builds the C++ object with the
// factories of include/celos, and hands the script a handle to it (see CelosObject).
//
// Duktape is compiled as C++ here: duk_error() unwinds with a C++ exception, so locals with
// destructors are fine, but these functions must never `catch (...)`.
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "celos/command_service.h"
#include "celos/utf8.h"
#include "celos/cron.h"
#include "js/js_args.h"
#include "js/js_scope.h"

namespace celos::js {
namespace {

constexpr const char* kObjectKey = DUK_HIDDEN_SYMBOL("celosObject");
constexpr const char* kScopeKey = "celosScope";
constexpr const char* kFunctionsKey = "celosPropertiesFunctions";




bool is_missing(duk_context* ctx, duk_idx_t idx) { return duk_is_null_or_undefined(ctx, idx); }

// `what` is e.g. `argument cronExpr` or `field "id"`.
std::string require_string(duk_context* ctx, duk_idx_t idx, const char* fn,
                           const std::string& what) {
  if (!duk_is_string(ctx, idx)) {
    throw_error(ctx, fmt::format("celos.{}: {} must be a string, got {}", fn, what,
                                 type_of(ctx, idx)));
  }
  duk_size_t length = 0;
  const char* text = duk_get_lstring(ctx, idx, &length);
  return cesu8_to_utf8(std::string_view(text, length));  // an emoji leaves Duktape as CESU-8
}

std::int64_t require_integer(duk_context* ctx, duk_idx_t idx, const char* fn,
                             const std::string& what, std::int64_t min) {
  if (!duk_is_number(ctx, idx)) {
    throw_error(ctx, fmt::format("celos.{}: {} must be a number, got {}", fn, what,
                                 type_of(ctx, idx)));
  }
  const double value = duk_get_number(ctx, idx);
  if (!std::isfinite(value) || value != std::floor(value) || value < static_cast<double>(min) ||
      std::fabs(value) > 9.0e15) {
    throw_error(ctx, fmt::format("celos.{}: {} must be an integer >= {}, got {}", fn, what, min,
                                 duk_safe_to_string(ctx, idx)));
  }
  return static_cast<std::int64_t>(value);
}

constexpr const char* kKindNames[] = {"a schedule", "a scheduling strategy", "a trigger",
                                      "an external service"};
constexpr const char* kKindMakers[] = {"celos.*Schedule()", "celos.*SchedulingStrategy()",
                                       "celos.*Trigger()", "celos.*ExternalService()"};

template <class T, std::size_t I = 0>
constexpr std::size_t kind_index() {
  if constexpr (std::is_same_v<std::variant_alternative_t<I, CelosObject>, T>) {
    return I;
  } else {
    return kind_index<T, I + 1>();
  }
}

void push_celos_object(duk_context* ctx, CelosObject object) {
  FileScope& scope = scope_of(ctx);
  scope.objects.push_back(std::move(object));
  duk_push_object(ctx);
  duk_push_uint(ctx, static_cast<duk_uint_t>(scope.objects.size() - 1));
  duk_put_prop_string(ctx, -2, kObjectKey);
}

// The C++ object behind the value at `idx`, which must be of kind T.
template <class T>
T require_celos_object(duk_context* ctx, duk_idx_t idx, const char* fn, const std::string& what) {
  FileScope& scope = scope_of(ctx);
  constexpr std::size_t kind = kind_index<T>();
  const std::string expected =
      fmt::format("celos.{}: {} must be {} made by {}", fn, what, kKindNames[kind],
                  kKindMakers[kind]);
  if (!is_plain_object(ctx, idx)) throw_error(ctx, fmt::format("{}, got {}", expected, type_of(ctx, idx)));
  if (!duk_get_prop_string(ctx, idx, kObjectKey)) {
    duk_pop(ctx);
    throw_error(ctx, expected + ", got a plain object");
  }
  const auto index = static_cast<std::size_t>(duk_get_uint(ctx, -1));
  duk_pop(ctx);
  if (index >= scope.objects.size()) throw_error(ctx, expected + ", got a stale object");
  const CelosObject& object = scope.objects[index];
  if (object.index() != kind) {
    throw_error(ctx, fmt::format("{}, got {}", expected, kKindNames[object.index()]));
  }
  return std::get<T>(object);
}

// An object of strings (numbers and booleans are turned into strings) as a property map.
std::map<std::string, std::string> require_properties(duk_context* ctx, duk_idx_t idx,
                                                      const char* fn, const std::string& what) {
  idx = duk_normalize_index(ctx, idx);
  if (!is_plain_object(ctx, idx)) {
    throw_error(ctx, fmt::format("celos.{}: {} must be an object, got {}", fn, what,
                                 type_of(ctx, idx)));
  }
  std::map<std::string, std::string> properties;
  duk_enum(ctx, idx, DUK_ENUM_OWN_PROPERTIES_ONLY);
  while (duk_next(ctx, -1, 1)) {
    const std::string name = duk_to_string(ctx, -2);
    if (!duk_is_string(ctx, -1) && !duk_is_number(ctx, -1) && !duk_is_boolean(ctx, -1)) {
      throw_error(ctx, fmt::format("celos.{}: {}: property \"{}\" must be a string, number or "
                                   "boolean, got {}",
                                   fn, what, name, type_of(ctx, -1)));
    }
    properties[cesu8_to_utf8(name)] = cesu8_to_utf8(duk_to_string(ctx, -1));
    duk_pop_2(ctx);
  }
  duk_pop(ctx);
  return properties;
}

// The value of a global variable read by the API, or undefined (pushed on the stack).
void push_global(duk_context* ctx, const char* name) { duk_get_global_string(ctx, name); }

void require_evaluating(duk_context* ctx, const char* fn) {
  if (!scope_of(ctx).evaluating) {
    throw_error(ctx, fmt::format("celos.{}: only allowed while the workflow file is evaluated, "
                                 "not in a properties function",
                                 fn));
  }
}

// ---- workflows ---------------------------------------------------------------------------

const std::set<std::string, std::less<>> kWorkflowFields = {
    "id",        "schedule", "schedulingStrategy", "trigger", "externalService", "startTime",
    "maxRetryCount", "waitTimeoutSeconds", "url", "contacts",
    // datasets (js_datasets.cc)
    "inputs", "outputs", "atomicOutputs",
    // retry back-off and notifications (js_operator.cc)
    "retryDelaySeconds", "retryBackoffFactor", "maxRetryDelaySeconds", "notify"};

// Pushes options[name]; returns false (and leaves undefined) when it is missing or null.
bool get_field(duk_context* ctx, const char* name) {
  duk_get_prop_string(ctx, 0, name);
  return !is_missing(ctx, -1);
}

std::string field(const char* name) { return fmt::format("field \"{}\"", name); }

std::vector<Contact> read_contacts(duk_context* ctx, const char* fn) {
  if (!duk_is_array(ctx, -1)) {
    throw_error(ctx, fmt::format("celos.{}: field \"contacts\" must be an array of {{name, "
                                 "email}} objects, got {}",
                                 fn, type_of(ctx, -1)));
  }
  std::vector<Contact> contacts;
  const auto length = duk_get_length(ctx, -1);
  for (duk_uarridx_t i = 0; i < length; ++i) {
    duk_get_prop_index(ctx, -1, i);
    const std::string what = fmt::format("field \"contacts\"[{}]", i);
    if (!is_plain_object(ctx, -1)) {
      throw_error(ctx, fmt::format("celos.{}: {} must be a {{name, email}} object, got {}", fn,
                                   what, type_of(ctx, -1)));
    }
    Contact contact;
    duk_get_prop_string(ctx, -1, "name");
    if (!is_missing(ctx, -1)) contact.name = require_string(ctx, -1, fn, what + ".name");
    duk_pop(ctx);
    duk_get_prop_string(ctx, -1, "email");
    if (!is_missing(ctx, -1)) contact.email = require_string(ctx, -1, fn, what + ".email");
    duk_pop_2(ctx);
    contacts.push_back(std::move(contact));
  }
  return contacts;
}

duk_ret_t define_workflow(duk_context* ctx) {
  const char* fn = duk_get_current_magic(ctx) == 1 ? "addWorkflow" : "defineWorkflow";
  require_evaluating(ctx, fn);
  FileScope& scope = scope_of(ctx);
  if (!is_plain_object(ctx, 0)) {
    throw_error(ctx, fmt::format("celos.{}: argument options must be an object, got {}", fn,
                                 type_of(ctx, 0)));
  }
  duk_enum(ctx, 0, DUK_ENUM_OWN_PROPERTIES_ONLY);
  while (duk_next(ctx, -1, 0)) {
    const std::string name = duk_to_string(ctx, -1);
    if (!kWorkflowFields.count(name)) {
      throw_error(ctx, fmt::format("celos.{}: unknown field \"{}\" (known: id, schedule, "
                                   "schedulingStrategy, trigger, externalService, startTime, "
                                   "maxRetryCount, waitTimeoutSeconds, url, contacts, inputs, outputs, "
                                   "atomicOutputs, retryDelaySeconds, retryBackoffFactor, "
                                   "maxRetryDelaySeconds, notify)",
                                   fn, name));
    }
    duk_pop(ctx);
  }
  duk_pop(ctx);

  Workflow workflow;
  if (!get_field(ctx, "id")) throw_error(ctx, fmt::format("celos.{}: field \"id\" is required", fn));
  workflow.id = require_string(ctx, -1, fn, field("id"));
  if (auto valid = validate_workflow_id(workflow.id); !valid) {
    throw_error(ctx, fmt::format("celos.{}: field \"id\": {}", fn, valid.error().message));
  }
  duk_pop(ctx);
  const auto required = [&](const char* name) {
    if (!get_field(ctx, name)) {
      throw_error(ctx, fmt::format("celos.{}: field \"{}\" is required (workflow \"{}\")", fn,
                                   name, workflow.id));
    }
  };
  required("schedule");
  workflow.schedule =
      require_celos_object<std::shared_ptr<const Schedule>>(ctx, -1, fn, field("schedule"));
  required("schedulingStrategy");
  workflow.strategy = require_celos_object<std::shared_ptr<const SchedulingStrategy>>(
      ctx, -1, fn, field("schedulingStrategy"));
  read_dataset_fields(ctx, fn, workflow);
  // With inputs, a missing trigger is derived from them once all files are loaded.
  if (workflow.inputs.empty()) required("trigger");
  else get_field(ctx, "trigger");
  if (!is_missing(ctx, -1)) {
    workflow.trigger = require_celos_object<TriggerPtr>(ctx, -1, fn, field("trigger"));
  }
  required("externalService");
  workflow.service =
      require_celos_object<ExternalServicePtr>(ctx, -1, fn, field("externalService"));
  duk_pop_n(ctx, 4);

  if (get_field(ctx, "startTime")) {
    auto start = parse_time(require_string(ctx, -1, fn, field("startTime")));
    if (!start) {
      throw_error(ctx, fmt::format("celos.{}: field \"startTime\": {}", fn, start.error().message));
    }
    workflow.start_time = *start;
  }
  if (get_field(ctx, "maxRetryCount")) {
    workflow.max_retry_count =
        static_cast<int>(require_integer(ctx, -1, fn, field("maxRetryCount"), 0));
  }
  if (get_field(ctx, "waitTimeoutSeconds")) {
    workflow.wait_timeout_seconds = require_integer(ctx, -1, fn, field("waitTimeoutSeconds"), 0);
  }
  if (get_field(ctx, "url")) workflow.url = require_string(ctx, -1, fn, field("url"));
  if (get_field(ctx, "contacts")) workflow.contacts = read_contacts(ctx, fn);
  duk_pop_n(ctx, 5);
  read_operator_fields(ctx, fn, workflow);

  for (std::size_t i = 0; i < scope.workflows.size(); ++i) {
    if (scope.workflows[i].id == workflow.id) {
      throw_error(ctx, fmt::format("celos.{}: duplicate workflow id \"{}\" (already defined on "
                                   "line {})",
                                   fn, workflow.id, scope.lines[i]));
    }
  }
  workflow.file = scope.file_name;
  scope.lines.push_back(current_site(ctx, scope.file_name).file_line);
  workflow.line = scope.lines.back();
  scope.workflows.push_back(std::move(workflow));
  return 0;
}

bool valid_defaults_name(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (const char c : name) {
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20) return false;
  }
  return true;
}

// Evaluates <defaults>/<name>.js as global code of the calling file's heap, so that its
// variables and functions become the caller's globals.
duk_ret_t import_defaults(duk_context* ctx) {
  const char* fn = "importDefaults";
  require_evaluating(ctx, fn);
  FileScope& scope = scope_of(ctx);
  const std::string name = require_string(ctx, 0, fn, "argument name");
  if (!valid_defaults_name(name)) {
    throw_error(ctx, fmt::format("celos.importDefaults: argument name \"{}\" must be a file name "
                                 "without \".js\" and without \"/\"",
                                 name));
  }
  scope.imported_defaults.push_back(name);
  if (scope.settings.defaults_dir.empty()) {
    throw_error(ctx, fmt::format("celos.importDefaults: cannot import \"{}\": no defaults "
                                 "directory is configured",
                                 name));
  }
  const std::string path = defaults_path(scope.settings.defaults_dir, name);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw_error(ctx, fmt::format("celos.importDefaults: no defaults file \"{}\" ({})", name, path));
  }
  std::ostringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  duk_push_lstring(ctx, source.data(), source.size());
  duk_push_string(ctx, fmt::format("defaults/{}.js", name).c_str());
  if (duk_pcompile(ctx, 0) != 0) {
    throw_error(ctx, fmt::format("celos.importDefaults: defaults file \"{}\": {}", name,
                                 duk_safe_to_string(ctx, -1)));
  }
  duk_call(ctx, 0);
  return 0;
}

// ---- schedules and strategies ------------------------------------------------------------

duk_ret_t hourly_schedule(duk_context* ctx) {
  push_celos_object(ctx, make_hourly_schedule());
  return 1;
}

duk_ret_t minutely_schedule(duk_context* ctx) {
  push_celos_object(ctx, make_minutely_schedule());
  return 1;
}

duk_ret_t cron_schedule(duk_context* ctx) {
  const std::string text = require_string(ctx, 0, "cronSchedule", "argument cronExpr");
  auto expression = CronExpression::parse(text);
  if (!expression) throw_error(ctx, "celos.cronSchedule: " + expression.error().message);
  if (auto dense = check_schedule_density(*expression); !dense) {
    throw_error(ctx, "celos.cronSchedule: " + dense.error().message);
  }
  push_celos_object(ctx, make_cron_schedule(std::move(*expression)));
  return 1;
}

duk_ret_t dependent_schedule(duk_context* ctx) {
  std::string id = require_string(ctx, 0, "dependentSchedule", "argument workflowId");
  if (auto valid = validate_workflow_id(id); !valid) {
    throw_error(ctx, "celos.dependentSchedule: argument workflowId: " + valid.error().message);
  }
  push_celos_object(ctx, make_dependent_schedule(std::move(id)));
  return 1;
}

duk_ret_t serial_strategy(duk_context* ctx) {
  std::int64_t concurrency = 1;
  if (!is_missing(ctx, 0)) {
    concurrency =
        require_integer(ctx, 0, "serialSchedulingStrategy", "argument concurrency", 1);
  }
  if (concurrency > 1000000) {
    throw_error(ctx, "celos.serialSchedulingStrategy: argument concurrency is too large");
  }
  push_celos_object(ctx, make_serial_strategy(static_cast<int>(concurrency)));
  return 1;
}

// ---- triggers ----------------------------------------------------------------------------

duk_ret_t always_trigger(duk_context* ctx) {
  push_celos_object(ctx, make_always_trigger());
  return 1;
}

duk_ret_t hdfs_check_trigger(duk_context* ctx) {
  const char* fn = "hdfsCheckTrigger";
  std::string path = require_string(ctx, 0, fn, "argument path");
  std::string fs;
  if (!is_missing(ctx, 1)) {
    fs = require_string(ctx, 1, fn, "argument fs");
  } else {
    push_global(ctx, "CELOS_DEFAULT_HDFS");
    if (!is_missing(ctx, -1)) fs = require_string(ctx, -1, fn, "CELOS_DEFAULT_HDFS");
    duk_pop(ctx);
  }
  push_celos_object(ctx, make_hdfs_check_trigger(std::move(path), std::move(fs)));
  return 1;
}

duk_ret_t success_trigger(duk_context* ctx) {
  std::string id = require_string(ctx, 0, "successTrigger", "argument workflowId");
  if (auto valid = validate_workflow_id(id); !valid) {
    throw_error(ctx, "celos.successTrigger: argument workflowId: " + valid.error().message);
  }
  push_celos_object(ctx, make_success_trigger(std::move(id)));
  return 1;
}

std::vector<TriggerPtr> trigger_arguments(duk_context* ctx, const char* fn) {
  std::vector<TriggerPtr> triggers;
  const duk_idx_t count = duk_get_top(ctx);
  for (duk_idx_t i = 0; i < count; ++i) {
    triggers.push_back(
        require_celos_object<TriggerPtr>(ctx, i, fn, fmt::format("argument {}", i + 1)));
  }
  return triggers;
}

duk_ret_t and_trigger(duk_context* ctx) {
  push_celos_object(ctx, make_and_trigger(trigger_arguments(ctx, "andTrigger")));
  return 1;
}

duk_ret_t or_trigger(duk_context* ctx) {
  push_celos_object(ctx, make_or_trigger(trigger_arguments(ctx, "orTrigger")));
  return 1;
}

duk_ret_t not_trigger(duk_context* ctx) {
  push_celos_object(
      ctx, make_not_trigger(require_celos_object<TriggerPtr>(ctx, 0, "notTrigger", "argument trigger")));
  return 1;
}

duk_ret_t offset_trigger(duk_context* ctx) {
  const char* fn = "offsetTrigger";
  const std::int64_t seconds = require_integer(ctx, 0, fn, "argument seconds", -9000000000000000);
  auto inner = require_celos_object<TriggerPtr>(ctx, 1, fn, "argument trigger");
  push_celos_object(ctx, make_offset_trigger(seconds, std::move(inner)));
  return 1;
}

duk_ret_t delay_trigger(duk_context* ctx) {
  const std::int64_t seconds =
      require_integer(ctx, 0, "delayTrigger", "argument seconds", -9000000000000000);
  push_celos_object(ctx, make_delay_trigger(seconds));
  return 1;
}

// ---- external services -------------------------------------------------------------------

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
  call.result = require_properties(ctx, -1, "oozieExternalService",
                                   "the result of the properties function");
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
    auto lock = heap->lock();
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
  push_celos_object(ctx, make_js_oozie_service(scope.settings.http, std::move(url),
                                               std::move(defaults), std::move(properties),
                                               scope.settings.oozie_user));
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
        throw_error(ctx, fmt::format("celos.{}: unknown option \"{}\" (known: env, cwd)", fn, name));
      }
      duk_pop_2(ctx);
    }
    duk_pop(ctx);
  }
  push_celos_object(ctx, make_command_external_service(std::move(options)));
  return 1;
}

// ---- helpers -----------------------------------------------------------------------------

duk_ret_t replace_time_variables_js(duk_context* ctx) {
  const char* fn = "replaceTimeVariables";
  const std::string text = require_string(ctx, 0, fn, "argument string");
  // A slot object (as given to a properties function) is accepted for its time.
  if (is_plain_object(ctx, 1)) duk_get_prop_string(ctx, 1, "time");
  else duk_dup(ctx, 1);
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
    {"hourlySchedule", hourly_schedule, 0},
    {"minutelySchedule", minutely_schedule, 0},
    {"cronSchedule", cron_schedule, 1},
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
    {"replaceTimeVariables", replace_time_variables_js, 2},
    {"mergeProperties", merge_properties, 2},
    {"dataset", dataset_js, 2},
    {"statusTrigger", status_trigger_js, 2},
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

void push_trigger(duk_context* ctx, TriggerPtr trigger) { push_celos_object(ctx, std::move(trigger)); }

std::string defaults_path(const std::string& defaults_dir, const std::string& name) {
  return defaults_dir + "/" + name + ".js";
}

void push_external_service(duk_context* ctx, ExternalServicePtr service) {
  push_celos_object(ctx, std::move(service));
}

}  // namespace celos::js
