// Argument checks shared by the celos.* functions of every js/*.cc file. Internal.
#pragma once

#include <string>

#include <duktape.h>

namespace celos::js {

// Throws a JavaScript TypeError with `message` (the loader reports it with file and line).
[[noreturn]] void throw_error(duk_context* ctx, const std::string& message);

// "undefined", "null", "a number", "an array", ... for messages.
std::string type_of(duk_context* ctx, duk_idx_t idx);

// An object that is neither an array nor a function.
bool is_plain_object(duk_context* ctx, duk_idx_t idx);

}  // namespace celos::js
