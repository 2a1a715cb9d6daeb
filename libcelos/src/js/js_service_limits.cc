// celos.serviceLimits(endpoint, {submitsPerSecond, maxConcurrent}) (issue 29,
// celos/service_limits.h): limits of one external service endpoint, usually in a defaults file.
// Declarations are collected per file (FileScope::service_limits) and linked by the loader
// (link_service_limits), so a defaults file imported by many workflow files declares once.
//
// Like js_api.cc, a Duktape C function compiled as C++: errors unwind as C++ exceptions.
#include <cmath>

#include <fmt/format.h>

#include "js/js_args.h"
#include "js/js_scope.h"

namespace celos::js {
namespace {

constexpr const char* kLimitsFn = "serviceLimits";

// submitsPerSecond: a number > 0 (fractions space the submissions: 0.5 is one every 2 s).
double read_rate(duk_context* ctx, duk_idx_t idx) {
  const double v = duk_is_number(ctx, idx) ? duk_get_number(ctx, idx) : NAN;
  if (!std::isfinite(v) || v <= 0 || v > 1e6) {
    throw_error(ctx, fmt::format("celos.{}: field \"submitsPerSecond\" must be a number > 0 "
                                 "(at most 1000000), got {}",
                                 kLimitsFn,
                                 duk_is_number(ctx, idx) ? duk_safe_to_string(ctx, idx)
                                                         : type_of(ctx, idx)));
  }
  return v;
}

ServiceLimits read_limits(duk_context* ctx, duk_idx_t idx) {
  if (!is_plain_object(ctx, idx)) {
    throw_error(ctx, fmt::format("celos.{}: argument limits must be an object {{submitsPerSecond, "
                                 "maxConcurrent}}, got {}",
                                 kLimitsFn, type_of(ctx, idx)));
  }
  ServiceLimits limits;
  duk_enum(ctx, idx, DUK_ENUM_OWN_PROPERTIES_ONLY);
  while (duk_next(ctx, -1, 1)) {  // [enum key value]
    const std::string key = duk_to_string(ctx, -2);
    if (key == "submitsPerSecond") {
      limits.submits_per_second = read_rate(ctx, -1);
    } else if (key == "maxConcurrent") {
      limits.max_concurrent = static_cast<int>(std::min<std::int64_t>(
          require_integer(ctx, -1, kLimitsFn, "field \"maxConcurrent\"", 1), 1'000'000'000));
    } else {
      throw_error(ctx, fmt::format("celos.{}: unknown field \"{}\" (known: submitsPerSecond, "
                                   "maxConcurrent)",
                                   kLimitsFn, key));
    }
    duk_pop_2(ctx);
  }
  duk_pop(ctx);
  if (!limits.submits_per_second && !limits.max_concurrent) {
    throw_error(ctx,
                fmt::format("celos.{}: give submitsPerSecond, maxConcurrent or both", kLimitsFn));
  }
  return limits;
}

}  // namespace

duk_ret_t service_limits_js(duk_context* ctx) {
  const std::string endpoint = require_string(ctx, 0, kLimitsFn, "argument endpoint");
  if (endpoint.empty()) {
    throw_error(ctx, fmt::format("celos.{}: argument endpoint must not be empty (e.g. \"oozie "
                                 "http://oozie:11000/oozie\", \"slurm batch\")",
                                 kLimitsFn));
  }
  const ServiceLimits limits = read_limits(ctx, 1);
  FileScope& scope = scope_of(ctx);
  for (const ServiceLimitDeclaration& d : scope.service_limits) {
    if (d.endpoint != endpoint) continue;
    if (d.limits == limits) return 0;  // the same defaults imported twice
    throw_error(ctx, fmt::format("celos.{}: endpoint \"{}\" already has other limits (line {})",
                                 kLimitsFn, endpoint, d.line));
  }
  scope.service_limits.push_back(
      {endpoint, limits, scope.file_name, current_site(ctx, scope.file_name).file_line});
  return 0;
}

}  // namespace celos::js
