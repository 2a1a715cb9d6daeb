// celos.defineWorkflow (and its old name addWorkflow) and importDefaults
// (docs/javascript-api.md): the options object checked field by field, the workflow recorded
// with its line; a defaults file evaluated as the caller's global code.
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "js/js_functions.h"
#include "js/js_objects.h"

namespace celos::js {
namespace {

const std::set<std::string, std::less<>> kWorkflowFields = {
    "id", "schedule", "schedulingStrategy", "trigger", "externalService", "startTime",
    "maxRetryCount", "waitTimeoutSeconds", "url", "contacts",
    // datasets (js_datasets.cc)
    "inputs", "outputs", "atomicOutputs",
    // retry back-off and notifications (js_operator.cc)
    "retryDelaySeconds", "retryBackoffFactor", "maxRetryDelaySeconds", "notify",
    // deadlines (js_deadline.cc)
    "deadline", "onMiss"};

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

// Every field of the options at stack index 0 must be a known one.
void check_workflow_fields(duk_context* ctx, const char* fn) {
  if (!is_plain_object(ctx, 0)) {
    throw_error(ctx, fmt::format("celos.{}: argument options must be an object, got {}", fn,
                                 type_of(ctx, 0)));
  }
  duk_enum(ctx, 0, DUK_ENUM_OWN_PROPERTIES_ONLY);
  while (duk_next(ctx, -1, 0)) {
    const std::string name = duk_to_string(ctx, -1);
    if (!kWorkflowFields.count(name)) {
      throw_error(ctx,
                  fmt::format("celos.{}: unknown field \"{}\" (known: id, schedule, "
                              "schedulingStrategy, trigger, externalService, startTime, "
                              "maxRetryCount, waitTimeoutSeconds, url, contacts, inputs, outputs, "
                              "atomicOutputs, retryDelaySeconds, retryBackoffFactor, "
                              "maxRetryDelaySeconds, notify, deadline, onMiss)",
                              fn, name));
    }
    duk_pop(ctx);
  }
  duk_pop(ctx);
}

// The id and the objects made by celos.* functions (schedule, strategy, trigger, service), and
// the dataset fields (with inputs, a missing trigger is derived from them once all files are
// loaded).
void read_required_fields(duk_context* ctx, const char* fn, Workflow& workflow) {
  if (!get_field(ctx, "id"))
    throw_error(ctx, fmt::format("celos.{}: field \"id\" is required", fn));
  workflow.id = require_string(ctx, -1, fn, field("id"));
  if (auto valid = validate_workflow_id(workflow.id); !valid) {
    throw_error(ctx, fmt::format("celos.{}: field \"id\": {}", fn, valid.error().message));
  }
  duk_pop(ctx);
  const auto required = [&](const char* name) {
    if (!get_field(ctx, name)) {
      throw_error(ctx, fmt::format("celos.{}: field \"{}\" is required (workflow \"{}\")", fn, name,
                                   workflow.id));
    }
  };
  required("schedule");
  workflow.schedule =
      require_celos_object<std::shared_ptr<const Schedule>>(ctx, -1, fn, field("schedule"));
  required("schedulingStrategy");
  workflow.strategy = require_celos_object<std::shared_ptr<const SchedulingStrategy>>(
      ctx, -1, fn, field("schedulingStrategy"));
  read_dataset_fields(ctx, fn, workflow);
  if (workflow.inputs.empty())
    required("trigger");
  else
    get_field(ctx, "trigger");
  if (!is_missing(ctx, -1)) {
    workflow.trigger = require_celos_object<TriggerPtr>(ctx, -1, fn, field("trigger"));
  }
  required("externalService");
  workflow.service =
      require_celos_object<ExternalServicePtr>(ctx, -1, fn, field("externalService"));
  duk_pop_n(ctx, 4);
}

void read_optional_fields(duk_context* ctx, const char* fn, Workflow& workflow) {
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
  read_deadline_fields(ctx, fn, workflow);
}

}  // namespace

duk_ret_t define_workflow(duk_context* ctx) {
  const char* fn = duk_get_current_magic(ctx) == 1 ? "addWorkflow" : "defineWorkflow";
  require_evaluating(ctx, fn);
  FileScope& scope = scope_of(ctx);
  check_workflow_fields(ctx, fn);
  Workflow workflow;
  read_required_fields(ctx, fn, workflow);
  read_optional_fields(ctx, fn, workflow);
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

namespace {

bool valid_defaults_name(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (const char c : name) {
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20) return false;
  }
  return true;
}

}  // namespace

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

}  // namespace celos::js
