// The dataset functions of the celos.* API (SPEC §14, docs/javascript-api.md): celos.dataset,
// celos.statusTrigger, and the `inputs`, `outputs` and `atomicOutputs` fields of
// defineWorkflow. Ids are only checked for form here; the loader resolves them once every file
// is loaded (link_datasets in celos/workflow.h).
//
// Like js_api.cc, these are Duktape C functions compiled as C++: errors unwind as C++
// exceptions, so they must never `catch (...)`.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "js/js_args.h"
#include "js/js_scope.h"

namespace celos::js {
namespace {

// A dataset object handed to the script carries its id under this hidden key.
constexpr const char* kDatasetKey = DUK_HIDDEN_SYMBOL("celosDataset");

std::string require_dataset_string(duk_context* ctx, duk_idx_t idx, const std::string& where) {
  if (!duk_is_string(ctx, idx)) {
    throw_error(ctx, fmt::format("{} must be a string, got {}", where, type_of(ctx, idx)));
  }
  duk_size_t length = 0;
  const char* text = duk_get_lstring(ctx, idx, &length);
  return std::string(text, length);
}

std::string require_dataset_id(duk_context* ctx, duk_idx_t idx, const std::string& where) {
  std::string id = require_dataset_string(ctx, idx, where);
  if (auto valid = validate_workflow_id(id); !valid) {
    std::string why = valid.error().message;
    if (auto at = why.find("workflow id"); at != std::string::npos)
      why.replace(at, 11, "dataset id");
    throw_error(ctx, fmt::format("{}: {}", where, why));
  }
  return id;
}

// Checks that the object at `idx` has only `known` keys.
void check_keys(duk_context* ctx, duk_idx_t idx, const std::vector<std::string>& known,
                const std::string& where) {
  duk_enum(ctx, idx, DUK_ENUM_OWN_PROPERTIES_ONLY);
  while (duk_next(ctx, -1, 0)) {
    const std::string name = duk_to_string(ctx, -1);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw_error(ctx, fmt::format("{}: unknown field \"{}\" (known: {})", where, name,
                                   fmt::join(known, ", ")));
    }
    duk_pop(ctx);
  }
  duk_pop(ctx);
}

// obj[name] pushed; false (undefined pushed) when missing or null.
bool get(duk_context* ctx, duk_idx_t obj, const char* name) {
  duk_get_prop_string(ctx, obj, name);
  return !duk_is_null_or_undefined(ctx, -1);
}

void put_string(duk_context* ctx, const char* name, const std::string& value) {
  duk_push_lstring(ctx, value.data(), value.size());
  duk_put_prop_string(ctx, -2, name);
}

// The id of a dataset given as its id or as an object made by celos.dataset.
std::string dataset_reference(duk_context* ctx, duk_idx_t idx, const std::string& where) {
  idx = duk_normalize_index(ctx, idx);
  if (duk_is_string(ctx, idx)) return require_dataset_id(ctx, idx, where);
  if (is_plain_object(ctx, idx) && duk_get_prop_string(ctx, idx, kDatasetKey)) {
    std::string id = duk_to_string(ctx, -1);
    duk_pop(ctx);
    return id;
  }
  if (is_plain_object(ctx, idx)) duk_pop(ctx);
  throw_error(ctx, fmt::format("{} must be a dataset made by celos.dataset() or a dataset id, "
                               "got {}",
                               where, type_of(ctx, idx)));
}

std::int64_t require_offset(duk_context* ctx, duk_idx_t idx, const std::string& where) {
  const double v = duk_is_number(ctx, idx) ? duk_get_number(ctx, idx) : NAN;
  if (!std::isfinite(v) || v != std::floor(v) || std::fabs(v) > 3.2e9) {
    throw_error(ctx, fmt::format("{} must be a whole number of seconds, got {}", where,
                                 duk_safe_to_string(ctx, idx)));
  }
  return static_cast<std::int64_t>(v);
}

// One entry of `inputs` / `outputs`: a dataset, its id, or {dataset, offset, mode, minInstances}.
DatasetUse read_use(duk_context* ctx, duk_idx_t idx, bool input, const std::string& where) {
  idx = duk_normalize_index(ctx, idx);
  DatasetUse use;
  const bool detailed = is_plain_object(ctx, idx) && !duk_has_prop_string(ctx, idx, kDatasetKey);
  if (!detailed) {
    use.dataset = dataset_reference(ctx, idx, where);
    return use;
  }
  if (input)
    check_keys(ctx, idx, {"dataset", "offset", "mode", "minInstances"}, where);
  else
    check_keys(ctx, idx, {"dataset", "offset"}, where);
  if (!get(ctx, idx, "dataset")) throw_error(ctx, where + ": field \"dataset\" is required");
  use.dataset = dataset_reference(ctx, -1, where + ".dataset");
  if (get(ctx, idx, "offset")) use.offset = require_offset(ctx, -1, where + ".offset");
  if (get(ctx, idx, "mode")) {
    const std::string mode = require_dataset_string(ctx, -1, where + ".mode");
    if (mode != "latest" && mode != "new") {
      throw_error(ctx,
                  fmt::format("{}.mode must be \"latest\" or \"new\", got \"{}\"", where, mode));
    }
    use.mode = mode == "new" ? InputMode::kNew : InputMode::kLatest;
  }
  if (get(ctx, idx, "minInstances")) {
    if (use.mode != InputMode::kNew) {
      throw_error(ctx, where + ".minInstances is only allowed with mode \"new\"");
    }
    const double n = duk_is_number(ctx, -1) ? duk_get_number(ctx, -1) : NAN;
    if (!std::isfinite(n) || n != std::floor(n) || n < 1 || n > 100000) {
      throw_error(ctx, fmt::format("{}.minInstances must be an integer >= 1, got {}", where,
                                   duk_safe_to_string(ctx, -1)));
    }
    use.min_instances = static_cast<int>(n);
  }
  duk_pop_n(ctx, 4);
  return use;
}

std::vector<DatasetUse> read_uses(duk_context* ctx, const char* fn, const char* name, bool input) {
  std::vector<DatasetUse> uses;
  if (!get(ctx, 0, name)) {
    duk_pop(ctx);
    return uses;
  }
  const std::string where = fmt::format("celos.{}: field \"{}\"", fn, name);
  if (!duk_is_array(ctx, -1)) {
    throw_error(ctx, fmt::format("{} must be an array, got {}", where, type_of(ctx, -1)));
  }
  const auto length = duk_get_length(ctx, -1);
  for (duk_uarridx_t i = 0; i < length; ++i) {
    duk_get_prop_index(ctx, -1, i);
    DatasetUse use = read_use(ctx, -1, input, fmt::format("{}[{}]", where, i));
    for (const DatasetUse& earlier : uses) {
      if (earlier.dataset == use.dataset) {
        throw_error(ctx,
                    fmt::format("{}[{}]: dataset \"{}\" is listed twice", where, i, use.dataset));
      }
    }
    uses.push_back(std::move(use));
    duk_pop(ctx);
  }
  duk_pop(ctx);
  return uses;
}

}  // namespace

void read_dataset_fields(duk_context* ctx, const char* fn, Workflow& workflow) {
  workflow.inputs = read_uses(ctx, fn, "inputs", true);
  workflow.outputs = read_uses(ctx, fn, "outputs", false);
  if (get(ctx, 0, "atomicOutputs")) {
    if (!duk_is_boolean(ctx, -1)) {
      throw_error(ctx, fmt::format("celos.{}: field \"atomicOutputs\" must be a boolean, got {}",
                                   fn, type_of(ctx, -1)));
    }
    workflow.atomic_outputs = duk_get_boolean(ctx, -1) != 0;
  }
  duk_pop(ctx);
}

// celos.dataset(id, {path, fs?, doneFlag?})
duk_ret_t dataset_js(duk_context* ctx) {
  Dataset ds;
  ds.id = require_dataset_id(ctx, 0, "celos.dataset: argument id");
  const std::string where = "celos.dataset: argument options";
  if (!is_plain_object(ctx, 1)) {
    throw_error(ctx, fmt::format("{} must be an object {{path, fs, doneFlag}}, got {}", where,
                                 type_of(ctx, 1)));
  }
  check_keys(ctx, 1, {"path", "fs", "doneFlag"}, where);
  if (!get(ctx, 1, "path")) throw_error(ctx, where + ": field \"path\" is required");
  ds.path = require_dataset_string(ctx, -1, where + ".path");
  if (ds.path.empty() || ds.path[0] != '/') {
    throw_error(ctx, fmt::format("{}.path must be an absolute path, got \"{}\"", where, ds.path));
  }
  if (get(ctx, 1, "fs")) {
    ds.fs = require_dataset_string(ctx, -1, where + ".fs");
  } else {
    duk_get_global_string(ctx, "CELOS_DEFAULT_HDFS");
    if (!duk_is_null_or_undefined(ctx, -1))
      ds.fs = require_dataset_string(ctx, -1, "CELOS_DEFAULT_HDFS");
    duk_pop(ctx);
  }
  if (get(ctx, 1, "doneFlag")) {
    ds.done_flag = require_dataset_string(ctx, -1, where + ".doneFlag");
    if (ds.done_flag.empty() || ds.done_flag.find('/') != std::string::npos ||
        ds.done_flag == "." || ds.done_flag == "..") {
      throw_error(ctx,
                  fmt::format("{}.doneFlag must be a file name, got \"{}\"", where, ds.done_flag));
    }
  }
  duk_pop_3(ctx);

  FileScope& scope = scope_of(ctx);
  bool known = false;
  for (const DatasetDeclaration& d : scope.datasets) {
    if (d.dataset.id != ds.id) continue;
    if (!(d.dataset == ds)) {
      throw_error(ctx, fmt::format("celos.dataset: dataset \"{}\" is already declared differently "
                                   "(line {})",
                                   ds.id, d.line));
    }
    known = true;
  }
  if (!known)
    scope.datasets.push_back({ds, scope.file_name, current_site(ctx, scope.file_name).file_line});

  duk_push_object(ctx);
  put_string(ctx, "id", ds.id);
  put_string(ctx, "path", ds.path);
  put_string(ctx, "fs", ds.fs);
  put_string(ctx, "doneFlag", ds.done_flag);
  put_string(ctx, kDatasetKey, ds.id);
  return 1;
}

// celos.statusTrigger(workflowId, statuses)
duk_ret_t status_trigger_js(duk_context* ctx) {
  const std::string where = "celos.statusTrigger";
  std::string id = require_dataset_string(ctx, 0, where + ": argument workflowId");
  if (auto valid = validate_workflow_id(id); !valid) {
    throw_error(ctx, where + ": argument workflowId: " + valid.error().message);
  }
  if (!duk_is_array(ctx, 1) || duk_get_length(ctx, 1) == 0) {
    throw_error(ctx, fmt::format("{}: argument statuses must be a non-empty array of slot "
                                 "statuses, got {}",
                                 where, duk_is_array(ctx, 1) ? "an empty array" : type_of(ctx, 1)));
  }
  std::vector<std::string> statuses;
  const auto length = duk_get_length(ctx, 1);
  for (duk_uarridx_t i = 0; i < length; ++i) {
    duk_get_prop_index(ctx, 1, i);
    std::string s =
        require_dataset_string(ctx, -1, fmt::format("{}: argument statuses[{}]", where, i));
    if (!parse_slot_status(s)) {
      throw_error(ctx, fmt::format("{}: argument statuses[{}]: unknown status \"{}\" (known: "
                                   "WAITING, READY, RUNNING, SUCCESS, FAILURE, WAIT_TIMEOUT, "
                                   "KILLED)",
                                   where, i, s));
    }
    statuses.push_back(std::move(s));
    duk_pop(ctx);
  }
  push_trigger(ctx, make_status_trigger(std::move(id), std::move(statuses)));
  return 1;
}

}  // namespace celos::js
