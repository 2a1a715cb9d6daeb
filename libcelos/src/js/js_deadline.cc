// The deadline fields of defineWorkflow (issue 27, docs/deadlines.md): `deadline` ({after} or
// {at, timeZone, dayOffset}) and `onMiss`, each also from a defaults file through the globals
// CELOS_DEFAULT_DEADLINE and CELOS_DEFAULT_ON_MISS. `deadline: null` turns a default off.
//
// Like js_api.cc, these are Duktape C functions' helpers compiled as C++: errors unwind as C++
// exceptions, so they must never `catch (...)`.
#include <set>

#include <fmt/format.h>

#include "celos/deadline.h"
#include "js/js_args.h"
#include "js/js_scope.h"

namespace celos::js {
namespace {

const std::set<std::string, std::less<>> kDeadlineFields = {"after", "at", "timeZone", "dayOffset",
                                                            "onMiss"};

void check_deadline_fields(duk_context* ctx, const char* fn, const std::string& what) {
  if (!is_plain_object(ctx, -1)) {
    throw_error(ctx, fmt::format("celos.{}: {} must be an object {{after: \"PT3H\"}} or {{at: "
                                 "\"06:00\", timeZone, dayOffset}}, got {}",
                                 fn, what, type_of(ctx, -1)));
  }
  duk_enum(ctx, -1, DUK_ENUM_OWN_PROPERTIES_ONLY);
  while (duk_next(ctx, -1, 0)) {
    const std::string name = duk_to_string(ctx, -1);
    if (!kDeadlineFields.count(name)) {
      throw_error(ctx, fmt::format("celos.{}: {}: unknown field \"{}\" (known: after, at, "
                                   "timeZone, dayOffset, onMiss)",
                                   fn, what, name));
    }
    duk_pop(ctx);
  }
  duk_pop(ctx);
}

// ["notify"] or ["notify", "kill"] at the top of the stack: true when "kill" is in it.
bool read_on_miss(duk_context* ctx, const char* fn, const std::string& what) {
  if (!duk_is_array(ctx, -1) || duk_get_length(ctx, -1) == 0) {
    throw_error(ctx, fmt::format("celos.{}: {} must be [\"notify\"] or [\"notify\", \"kill\"], "
                                 "got {}",
                                 fn, what, type_of(ctx, -1)));
  }
  bool kill = false;
  const auto length = duk_get_length(ctx, -1);
  for (duk_uarridx_t i = 0; i < length; ++i) {
    duk_get_prop_index(ctx, -1, i);
    const std::string action = duk_is_string(ctx, -1) ? duk_get_string(ctx, -1) : "";
    if (action == "kill") {
      kill = true;
    } else if (action != "notify") {
      throw_error(ctx,
                  fmt::format("celos.{}: {}[{}]: unknown action {} (known: \"notify\", "
                              "\"kill\")",
                              fn, what, i,
                              duk_is_string(ctx, -1) ? "\"" + action + "\"" : type_of(ctx, -1)));
    }
    duk_pop(ctx);
  }
  return kill;
}

// The deadline object at the top of the stack.
DeadlineRule read_rule(duk_context* ctx, const char* fn, const std::string& what) {
  check_deadline_fields(ctx, fn, what);
  DeadlineRule rule;
  auto rejected = [&](const std::string& key, const std::string& message) {
    throw_error(ctx, fmt::format("celos.{}: {}.{}: {}", fn, what, key, message));
  };
  duk_get_prop_string(ctx, -1, "after");
  const bool has_after = !is_missing(ctx, -1);
  if (has_after) {
    auto after = parse_iso_duration(require_string(ctx, -1, fn, what + ".after"));
    if (!after) rejected("after", after.error().message);
    rule.after = *after;
  }
  duk_pop(ctx);
  duk_get_prop_string(ctx, -1, "at");
  if (is_missing(ctx, -1) == !has_after) {
    throw_error(ctx, fmt::format("celos.{}: {} needs exactly one of \"after\" (an ISO 8601 "
                                 "duration) and \"at\" (a time of day)",
                                 fn, what));
  }
  if (!has_after) {
    auto at = parse_time_of_day(require_string(ctx, -1, fn, what + ".at"));
    if (!at) rejected("at", at.error().message);
    rule.at = *at;
  }
  duk_pop(ctx);
  duk_get_prop_string(ctx, -1, "timeZone");
  if (!is_missing(ctx, -1)) rule.time_zone = require_string(ctx, -1, fn, what + ".timeZone");
  duk_pop(ctx);
  duk_get_prop_string(ctx, -1, "dayOffset");
  if (!is_missing(ctx, -1)) {
    rule.day_offset = static_cast<int>(require_integer(ctx, -1, fn, what + ".dayOffset", 0));
  }
  duk_pop(ctx);
  if (has_after && (rule.time_zone != "UTC" || rule.day_offset != 0)) {
    throw_error(ctx, fmt::format("celos.{}: {}: \"timeZone\" and \"dayOffset\" go with \"at\", "
                                 "not with \"after\"",
                                 fn, what));
  }
  if (auto valid = validate_deadline_rule(rule); !valid) {
    rejected(rule.time_zone != "UTC" ? "timeZone" : "dayOffset", valid.error().message);
  }
  duk_get_prop_string(ctx, -1, "onMiss");
  if (!is_missing(ctx, -1)) rule.kill_on_miss = read_on_miss(ctx, fn, what + ".onMiss");
  duk_pop(ctx);
  return rule;
}

}  // namespace

void read_deadline_fields(duk_context* ctx, const char* fn, Workflow& workflow) {
  std::string what = "field \"deadline\"";
  const bool own = duk_has_prop_string(ctx, 0, "deadline");
  if (own) {
    duk_get_prop_string(ctx, 0, "deadline");
  } else {
    push_global(ctx, "CELOS_DEFAULT_DEADLINE");
    what = "CELOS_DEFAULT_DEADLINE";
  }
  if (!is_missing(ctx, -1)) workflow.deadline = read_rule(ctx, fn, what);
  duk_pop(ctx);
  std::string on_miss = "field \"onMiss\"";
  if (duk_has_prop_string(ctx, 0, "onMiss")) {
    duk_get_prop_string(ctx, 0, "onMiss");
  } else {
    push_global(ctx, "CELOS_DEFAULT_ON_MISS");
    on_miss = "CELOS_DEFAULT_ON_MISS";
  }
  if (!is_missing(ctx, -1)) {
    const bool kill = read_on_miss(ctx, fn, on_miss);
    if (workflow.deadline) workflow.deadline->kill_on_miss |= kill;
  }
  duk_pop(ctx);
}

}  // namespace celos::js
