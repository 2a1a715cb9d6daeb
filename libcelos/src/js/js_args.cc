#include "js/js_args.h"

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

}  // namespace celos::js
