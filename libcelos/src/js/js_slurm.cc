// celos.slurmExternalService(script, options?) (SPEC §12, docs/javascript-api.md). Options of
// the wrong type and unknown options are load errors naming the function and the option; the
// loader adds the file and the line. Loading never runs a Slurm command.
//
// Like js_api.cc, these are Duktape C functions compiled as C++: errors unwind as C++
// exceptions, so they must never `catch (...)`.
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "celos/slurm_service.h"
#include "js/js_args.h"
#include "js/js_scope.h"

namespace celos::js {
namespace {

constexpr const char* kSlurmFn = "celos.slurmExternalService";
constexpr const char* kSlurmKnown = "partition, account, qos, time, cpus, mem, cwd, env, extraArgs";

std::string duk_string_at(duk_context* ctx, duk_idx_t idx, const std::string& what) {
  if (!duk_is_string(ctx, idx)) {
    throw_error(ctx,
                fmt::format("{}: {} must be a string, got {}", kSlurmFn, what, type_of(ctx, idx)));
  }
  duk_size_t length = 0;
  const char* text = duk_get_lstring(ctx, idx, &length);
  return std::string(text, length);
}

// A non-empty string without line breaks (an option value).
std::string option_string(duk_context* ctx, duk_idx_t idx, const std::string& what) {
  std::string value = duk_string_at(ctx, idx, what);
  if (value.empty() || value.find_first_of("\r\n") != std::string::npos) {
    throw_error(ctx, fmt::format("{}: {} must be a non-empty string on one line", kSlurmFn, what));
  }
  return value;
}

std::int64_t cpus_at(duk_context* ctx, duk_idx_t idx) {
  const double value = duk_is_number(ctx, idx) ? duk_get_number(ctx, idx) : 0;
  if (!duk_is_number(ctx, idx) || value != std::floor(value) || value < 1 || value > 100000) {
    throw_error(
        ctx,
        fmt::format("{}: option cpus must be a whole number from 1 to 100000, got {}", kSlurmFn,
                    duk_is_number(ctx, idx) ? duk_safe_to_string(ctx, idx) : type_of(ctx, idx)));
  }
  return static_cast<std::int64_t>(value);
}

std::map<std::string, std::string> env_at(duk_context* ctx, duk_idx_t idx) {
  idx = duk_normalize_index(ctx, idx);
  if (!is_plain_object(ctx, idx)) {
    throw_error(
        ctx, fmt::format("{}: option env must be an object, got {}", kSlurmFn, type_of(ctx, idx)));
  }
  std::map<std::string, std::string> env;
  duk_enum(ctx, idx, DUK_ENUM_OWN_PROPERTIES_ONLY);
  while (duk_next(ctx, -1, 1)) {
    const std::string name = duk_to_string(ctx, -2);
    const bool valid_name = !name.empty() && name.find_first_of("=\0", 0, 2) == std::string::npos;
    if (!valid_name || name.starts_with("SLURM_") || name.starts_with("SBATCH_")) {
      throw_error(ctx, fmt::format("{}: option env: \"{}\" is not allowed (SLURM_* and SBATCH_* "
                                   "would change what sbatch does)",
                                   kSlurmFn, name));
    }
    if (!duk_is_string(ctx, -1) && !duk_is_number(ctx, -1) && !duk_is_boolean(ctx, -1)) {
      throw_error(ctx, fmt::format("{}: option env: \"{}\" must be a string, number or boolean, "
                                   "got {}",
                                   kSlurmFn, name, type_of(ctx, -1)));
    }
    env[name] = duk_to_string(ctx, -1);
    duk_pop_2(ctx);
  }
  duk_pop(ctx);
  return env;
}

std::vector<std::string> extra_args_at(duk_context* ctx, duk_idx_t idx) {
  if (!duk_is_array(ctx, idx)) {
    throw_error(ctx, fmt::format("{}: option extraArgs must be an array of strings, got {}",
                                 kSlurmFn, type_of(ctx, idx)));
  }
  std::vector<std::string> args;
  const auto length = duk_get_length(ctx, idx);
  for (duk_uarridx_t i = 0; i < length; ++i) {
    duk_get_prop_index(ctx, idx, i);
    args.push_back(duk_string_at(ctx, -1, fmt::format("option extraArgs[{}]", i)));
    duk_pop(ctx);
  }
  if (auto valid = validate_slurm_extra_args(args); !valid) {
    throw_error(ctx, fmt::format("{}: option {}", kSlurmFn, valid.error().message));
  }
  return args;
}

// Reads one option (value at the top of the stack) into `options`.
void read_option(duk_context* ctx, const std::string& name, SlurmServiceOptions& options) {
  static const std::set<std::string, std::less<>> kNames = {
      "partition", "account", "qos", "time", "cpus", "mem", "cwd", "env", "extraArgs"};
  if (!kNames.contains(name)) {
    throw_error(ctx,
                fmt::format("{}: unknown option \"{}\" (known: {})", kSlurmFn, name, kSlurmKnown));
  }
  if (duk_is_null_or_undefined(ctx, -1)) return;  // as if not given
  const std::string what = "option " + name;
  const std::pair<const char*, std::string*> strings[] = {
      {"partition", &options.partition}, {"account", &options.account}, {"qos", &options.qos},
      {"time", &options.time},           {"mem", &options.mem},         {"cwd", &options.cwd}};
  for (const auto& [key, target] : strings) {
    if (name == key) {
      *target = option_string(ctx, -1, what);
      return;
    }
  }
  if (name == "cpus") {
    options.cpus = cpus_at(ctx, -1);
  } else if (name == "env") {
    options.env = env_at(ctx, -1);
  } else {
    options.extra_args = extra_args_at(ctx, -1);
  }
}

}  // namespace

duk_ret_t slurm_external_service_js(duk_context* ctx) {
  const EvalSettings& settings = scope_of(ctx).settings;
  SlurmServiceOptions options;
  options.script = duk_string_at(ctx, 0, "argument script");
  if (options.script.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw_error(ctx, fmt::format("{}: argument script must not be empty", kSlurmFn));
  }
  if (!duk_is_null_or_undefined(ctx, 1)) {
    if (!is_plain_object(ctx, 1)) {
      throw_error(ctx, fmt::format("{}: argument options must be an object, got {}", kSlurmFn,
                                   type_of(ctx, 1)));
    }
    duk_enum(ctx, 1, DUK_ENUM_OWN_PROPERTIES_ONLY);
    while (duk_next(ctx, -1, 1)) {
      const std::string name = duk_to_string(ctx, -2);
      read_option(ctx, name, options);
      duk_pop_2(ctx);
    }
    duk_pop(ctx);
  }
  options.jobs_dir = settings.jobs_dir.empty() ? settings.db_dir + "/jobs" : settings.jobs_dir;
  options.slurm_bin = settings.slurm_bin;
  options.timeout = settings.io_timeout;
  ProcessRunnerPtr runner =
      settings.process_runner ? settings.process_runner : make_process_runner();
  push_external_service(ctx, make_slurm_external_service(std::move(options), std::move(runner)));
  return 1;
}

}  // namespace celos::js
