// The operator fields of defineWorkflow (SPEC §13, docs/javascript-api.md): retry back-off
// (retryDelaySeconds, retryBackoffFactor, maxRetryDelaySeconds) and notify webhooks.
//
// Like js_api.cc, these are Duktape C functions' helpers compiled as C++: errors unwind as C++
// exceptions, so they must never `catch (...)`.
#include <cmath>

#include <fmt/format.h>

#include "js/js_args.h"
#include "js/js_scope.h"

namespace celos::js {
namespace {

// Ten years: a longer delay is a typo, not a policy.
constexpr double kMaxSeconds = 10.0 * 366 * 24 * 3600;

std::string shown(duk_context* ctx, duk_idx_t idx) {
  if (duk_is_string(ctx, idx)) return fmt::format("\"{}\"", duk_get_string(ctx, idx));
  return duk_safe_to_string(ctx, idx);
}

// options[name] as a number in [min, max] (whole when `integer`), or nothing when absent.
std::optional<double> number_field(duk_context* ctx, const char* fn, const char* name, double min,
                                   double max, bool integer) {
  duk_get_prop_string(ctx, 0, name);
  if (duk_is_null_or_undefined(ctx, -1)) {
    duk_pop(ctx);
    return std::nullopt;
  }
  const double value = duk_is_number(ctx, -1) ? duk_get_number(ctx, -1) : NAN;
  if (!std::isfinite(value) || value < min || value > max ||
      (integer && value != std::floor(value))) {
    throw_error(ctx,
                fmt::format("celos.{}: field \"{}\" must be {} from {} to {}, got {}", fn, name,
                            integer ? "a whole number" : "a number", min, max, shown(ctx, -1)));
  }
  duk_pop(ctx);
  return value;
}

std::vector<SlotStatus> read_statuses(duk_context* ctx, const char* fn, const std::string& what) {
  if (!duk_is_array(ctx, -1) || duk_get_length(ctx, -1) == 0) {
    throw_error(ctx, fmt::format("celos.{}: {} must be a non-empty array of statuses "
                                 "(e.g. [\"FAILURE\", \"WAIT_TIMEOUT\"])",
                                 fn, what));
  }
  std::vector<SlotStatus> out;
  const auto length = duk_get_length(ctx, -1);
  for (duk_uarridx_t i = 0; i < length; ++i) {
    duk_get_prop_index(ctx, -1, i);
    auto status = duk_is_string(ctx, -1) ? parse_slot_status(duk_get_string(ctx, -1))
                                         : Result<SlotStatus>(fail("not a string"));
    if (!status) {
      throw_error(ctx, fmt::format("celos.{}: {}[{}] must be one of WAITING, READY, RUNNING, "
                                   "SUCCESS, FAILURE, WAIT_TIMEOUT, KILLED, got {}",
                                   fn, what, i, shown(ctx, -1)));
    }
    out.push_back(*status);
    duk_pop(ctx);
  }
  return out;
}

Workflow::Notify read_notify_entry(duk_context* ctx, const char* fn, const std::string& what) {
  if (!duk_is_object(ctx, -1) || duk_is_array(ctx, -1) || duk_is_function(ctx, -1)) {
    throw_error(ctx, fmt::format("celos.{}: {} must be an object {{on, webhook}}", fn, what));
  }
  Workflow::Notify notify;
  duk_get_prop_string(ctx, -1, "on");
  notify.on = read_statuses(ctx, fn, what + ".on");
  duk_pop(ctx);
  duk_get_prop_string(ctx, -1, "webhook");
  const std::string url = duk_is_string(ctx, -1) ? duk_get_string(ctx, -1) : "";
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    throw_error(ctx, fmt::format("celos.{}: {}.webhook must be an http:// or https:// URL, got {}",
                                 fn, what, shown(ctx, -1)));
  }
  notify.webhook = url;
  duk_pop(ctx);
  return notify;
}

}  // namespace

void read_operator_fields(duk_context* ctx, const char* fn, Workflow& workflow) {
  if (auto v = number_field(ctx, fn, "retryDelaySeconds", 0, kMaxSeconds, true)) {
    workflow.retry_delay_seconds = static_cast<std::int64_t>(*v);
  }
  if (auto v = number_field(ctx, fn, "retryBackoffFactor", 1, 1000, false)) {
    workflow.retry_backoff_factor = *v;
  }
  if (auto v = number_field(ctx, fn, "maxRetryDelaySeconds", 0, kMaxSeconds, true)) {
    workflow.max_retry_delay_seconds = static_cast<std::int64_t>(*v);
  }
  duk_get_prop_string(ctx, 0, "notify");
  if (!duk_is_null_or_undefined(ctx, -1)) {
    if (!duk_is_array(ctx, -1)) {
      throw_error(ctx, fmt::format("celos.{}: field \"notify\" must be an array of {{on, webhook}} "
                                   "objects, got {}",
                                   fn, shown(ctx, -1)));
    }
    const auto length = duk_get_length(ctx, -1);
    for (duk_uarridx_t i = 0; i < length; ++i) {
      duk_get_prop_index(ctx, -1, i);
      workflow.notify.push_back(read_notify_entry(ctx, fn, fmt::format("field \"notify\"[{}]", i)));
      duk_pop(ctx);
    }
  }
  duk_pop(ctx);
}

}  // namespace celos::js
