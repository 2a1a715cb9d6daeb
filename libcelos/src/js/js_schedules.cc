// celos.*Schedule, celos.serialSchedulingStrategy and the celos.*Trigger functions
// (docs/javascript-api.md): each checks its arguments and hands the script a handle.
#include <fmt/format.h>

#include "celos/cron.h"
#include "js/js_functions.h"
#include "js/js_objects.h"
#include "js/js_time_zone.h"

namespace celos::js {
namespace {

std::vector<TriggerPtr> trigger_arguments(duk_context* ctx, const char* fn) {
  std::vector<TriggerPtr> triggers;
  const duk_idx_t count = duk_get_top(ctx);
  for (duk_idx_t i = 0; i < count; ++i) {
    triggers.push_back(
        require_celos_object<TriggerPtr>(ctx, i, fn, fmt::format("argument {}", i + 1)));
  }
  return triggers;
}

}  // namespace

// ---- schedules and strategies ------------------------------------------------------------

duk_ret_t hourly_schedule(duk_context* ctx) {
  push_celos_object(ctx, make_hourly_schedule(read_zone_options(ctx, 0, "hourlySchedule").zone));
  return 1;
}

duk_ret_t minutely_schedule(duk_context* ctx) {
  push_celos_object(ctx,
                    make_minutely_schedule(read_zone_options(ctx, 0, "minutelySchedule").zone));
  return 1;
}

duk_ret_t cron_schedule(duk_context* ctx) {
  const std::string text = require_string(ctx, 0, "cronSchedule", "argument cronExpr");
  auto expression = CronExpression::parse(text);
  if (!expression) throw_error(ctx, "celos.cronSchedule: " + expression.error().message);
  if (auto dense = check_schedule_density(*expression); !dense) {
    throw_error(ctx, "celos.cronSchedule: " + dense.error().message);
  }
  auto options = read_zone_options(ctx, 1, "cronSchedule");
  push_celos_object(
      ctx, make_cron_schedule(std::move(*expression), std::move(options.zone), options.rule));
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
    concurrency = require_integer(ctx, 0, "serialSchedulingStrategy", "argument concurrency", 1);
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

duk_ret_t and_trigger(duk_context* ctx) {
  push_celos_object(ctx, make_and_trigger(trigger_arguments(ctx, "andTrigger")));
  return 1;
}

duk_ret_t or_trigger(duk_context* ctx) {
  push_celos_object(ctx, make_or_trigger(trigger_arguments(ctx, "orTrigger")));
  return 1;
}

duk_ret_t not_trigger(duk_context* ctx) {
  push_celos_object(ctx, make_not_trigger(require_celos_object<TriggerPtr>(ctx, 0, "notTrigger",
                                                                           "argument trigger")));
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

}  // namespace celos::js
