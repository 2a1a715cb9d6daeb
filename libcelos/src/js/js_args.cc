#include "js/js_args.h"

#include <cmath>

#include <fmt/format.h>

#include "celos/utf8.h"
#include "js/js_scope.h"

namespace celos::js {

void throw_error(duk_context* ctx, const std::string& message) {
  duk_error_raw(ctx, DUK_ERR_TYPE_ERROR, __FILE__, __LINE__, "%s", message.c_str());
  __builtin_unreachable();  // duk_error_raw throws
}

std::string type_of(duk_context* ctx, duk_idx_t idx) {
  if (duk_is_undefined(ctx, idx)) return "undefined";
  if (duk_is_null(ctx, idx)) return "null";
  if (duk_is_boolean(ctx, idx)) return "a boolean";
  if (duk_is_number(ctx, idx)) return "a number";
  if (duk_is_string(ctx, idx)) return "a string";
  if (duk_is_array(ctx, idx)) return "an array";
  if (duk_is_function(ctx, idx)) return "a function";
  if (duk_is_object(ctx, idx)) return "an object";
  return "an unsupported value";
}

bool is_plain_object(duk_context* ctx, duk_idx_t idx) {
  return duk_is_object(ctx, idx) && !duk_is_array(ctx, idx) && !duk_is_function(ctx, idx);
}

bool is_missing(duk_context* ctx, duk_idx_t idx) { return duk_is_null_or_undefined(ctx, idx); }

std::string require_string(duk_context* ctx, duk_idx_t idx, const char* fn,
                           const std::string& what) {
  if (!duk_is_string(ctx, idx)) {
    throw_error(ctx,
                fmt::format("celos.{}: {} must be a string, got {}", fn, what, type_of(ctx, idx)));
  }
  duk_size_t length = 0;
  const char* text = duk_get_lstring(ctx, idx, &length);
  return cesu8_to_utf8(std::string_view(text, length));  // an emoji leaves Duktape as CESU-8
}

std::int64_t require_integer(duk_context* ctx, duk_idx_t idx, const char* fn,
                             const std::string& what, std::int64_t min) {
  if (!duk_is_number(ctx, idx)) {
    throw_error(ctx,
                fmt::format("celos.{}: {} must be a number, got {}", fn, what, type_of(ctx, idx)));
  }
  const double value = duk_get_number(ctx, idx);
  if (!std::isfinite(value) || value != std::floor(value) || value < static_cast<double>(min) ||
      std::fabs(value) > 9.0e15) {
    throw_error(ctx, fmt::format("celos.{}: {} must be an integer >= {}, got {}", fn, what, min,
                                 duk_safe_to_string(ctx, idx)));
  }
  return static_cast<std::int64_t>(value);
}

std::map<std::string, std::string> require_properties(duk_context* ctx, duk_idx_t idx,
                                                      const char* fn, const std::string& what) {
  idx = duk_normalize_index(ctx, idx);
  if (!is_plain_object(ctx, idx)) {
    throw_error(ctx,
                fmt::format("celos.{}: {} must be an object, got {}", fn, what, type_of(ctx, idx)));
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

void push_global(duk_context* ctx, const char* name) { duk_get_global_string(ctx, name); }

void require_evaluating(duk_context* ctx, const char* fn) {
  if (!scope_of(ctx).evaluating) {
    throw_error(ctx, fmt::format("celos.{}: only allowed while the workflow file is evaluated, "
                                 "not in a properties function",
                                 fn));
  }
}

}  // namespace celos::js
