// The zone options of celos.cronSchedule, hourlySchedule and minutelySchedule (issue 26,
// docs/time-zones.md): `{timeZone: "Europe/Paris", dst: {gap: "shift", overlap: "first"}}`,
// with CELOS_DEFAULT_TIME_ZONE (set in a defaults file) when no timeZone is given.
#include "js/js_time_zone.h"

#include <fmt/format.h>

#include "js/js_args.h"

namespace celos::js {
namespace {

// Calls `read(name)` with each own property of the object at `idx` on top of the stack.
template <class Read>
void for_each_field(duk_context* ctx, duk_idx_t idx, Read read) {
  duk_enum(ctx, idx, DUK_ENUM_OWN_PROPERTIES_ONLY);
  while (duk_next(ctx, -1, 1) != 0) {
    const std::string name = duk_get_string(ctx, -2);
    read(name);
    duk_pop_2(ctx);
  }
  duk_pop(ctx);
}

void require_object(duk_context* ctx, duk_idx_t idx, const char* fn, const std::string& what) {
  if (!is_plain_object(ctx, idx)) {
    throw_error(ctx,
                fmt::format("celos.{}: {} must be an object, got {}", fn, what, type_of(ctx, idx)));
  }
}

DstRule read_dst(duk_context* ctx, const char* fn) {
  require_object(ctx, -1, fn, "field \"dst\"");
  DstRule rule;
  rule.explicit_rule = true;
  for_each_field(ctx, -1, [&](const std::string& name) {
    const std::string what = "field \"dst." + name + "\"";
    if (name != "gap" && name != "overlap") {
      throw_error(ctx, fmt::format("celos.{}: unknown {} (known: gap, overlap)", fn, what));
    }
    const std::string value = require_string(ctx, -1, fn, what);
    if (name == "gap") {
      auto gap = parse_dst_gap(value);
      if (!gap) throw_error(ctx, fmt::format("celos.{}: {}: {}", fn, what, gap.error().message));
      rule.gap = *gap;
    } else {
      auto overlap = parse_dst_overlap(value);
      if (!overlap) {
        throw_error(ctx, fmt::format("celos.{}: {}: {}", fn, what, overlap.error().message));
      }
      rule.overlap = *overlap;
    }
  });
  return rule;
}

TimeZone load_zone(duk_context* ctx, const char* fn, const std::string& what,
                   const std::string& name) {
  auto zone = TimeZone::load(name);
  if (!zone) throw_error(ctx, fmt::format("celos.{}: {}: {}", fn, what, zone.error().message));
  return *zone;
}

}  // namespace

ZoneOptions read_zone_options(duk_context* ctx, duk_idx_t idx, const char* fn) {
  ZoneOptions options{TimeZone::utc(), DstRule{}};
  bool has_zone = false;
  if (!is_missing(ctx, idx)) {
    require_object(ctx, idx, fn, "argument options");
    for_each_field(ctx, idx, [&](const std::string& name) {
      if (is_missing(ctx, -1)) return;
      if (name == "timeZone") {
        const std::string what = "field \"timeZone\"";
        options.zone = load_zone(ctx, fn, what, require_string(ctx, -1, fn, what));
        has_zone = true;
      } else if (name == "dst") {
        options.rule = read_dst(ctx, fn);
      } else {
        throw_error(ctx,
                    fmt::format("celos.{}: unknown field \"{}\" (known: timeZone, dst)", fn, name));
      }
    });
  }
  if (!has_zone) {
    push_global(ctx, "CELOS_DEFAULT_TIME_ZONE");
    if (!is_missing(ctx, -1)) {
      const std::string what = "CELOS_DEFAULT_TIME_ZONE";
      options.zone = load_zone(ctx, fn, what, require_string(ctx, -1, fn, what));
    }
    duk_pop(ctx);
  }
  return options;
}

}  // namespace celos::js
