// Argument checks shared by the celos.* functions of every js/*.cc file. Internal.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <duktape.h>

namespace celos::js {

// Throws a JavaScript TypeError with `message` (the loader reports it with file and line).
[[noreturn]] void throw_error(duk_context* ctx, const std::string& message);

// "undefined", "null", "a number", "an array", ... for messages.
std::string type_of(duk_context* ctx, duk_idx_t idx);

// An object that is neither an array nor a function.
bool is_plain_object(duk_context* ctx, duk_idx_t idx);

// Null or undefined.
bool is_missing(duk_context* ctx, duk_idx_t idx);

// The checks of the celos.* functions: `fn` is the name after "celos." and `what` e.g.
// `argument cronExpr` or `field "id"`; a wrong value throws a TypeError naming both.
// A string, as UTF-8.
std::string require_string(duk_context* ctx, duk_idx_t idx, const char* fn,
                           const std::string& what);
// A whole number >= `min` (and within what a double holds exactly).
std::int64_t require_integer(duk_context* ctx, duk_idx_t idx, const char* fn,
                             const std::string& what, std::int64_t min);
// An object of strings (numbers and booleans are turned into strings) as a property map.
std::map<std::string, std::string> require_properties(duk_context* ctx, duk_idx_t idx,
                                                      const char* fn, const std::string& what);

// The value of a global variable read by the API, or undefined (pushed on the stack).
void push_global(duk_context* ctx, const char* name);

// defineWorkflow and importDefaults: only while the workflow file is evaluated.
void require_evaluating(duk_context* ctx, const char* fn);

}  // namespace celos::js
