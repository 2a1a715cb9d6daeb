// The handles of celos.* objects (schedules, strategies, triggers, external services): the
// JavaScript object handed to the script holds only a hidden index into FileScope::objects
// (js_scope.h), so that defineWorkflow gets the C++ object back and anything else is rejected
// with a message naming the function, the argument and what it should have been. Internal.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "js/js_args.h"
#include "js/js_scope.h"

namespace celos::js {

inline constexpr const char* kObjectKey = DUK_HIDDEN_SYMBOL("celosObject");

inline constexpr const char* kKindNames[] = {"a schedule", "a scheduling strategy", "a trigger",
                                             "an external service"};
inline constexpr const char* kKindMakers[] = {"celos.*Schedule()", "celos.*SchedulingStrategy()",
                                              "celos.*Trigger()", "celos.*ExternalService()"};

template <class T, std::size_t I = 0>
constexpr std::size_t kind_index() {
  if constexpr (std::is_same_v<std::variant_alternative_t<I, CelosObject>, T>) {
    return I;
  } else {
    return kind_index<T, I + 1>();
  }
}

// Hands the script a handle to `object` (js_api.cc).
void push_celos_object(duk_context* ctx, CelosObject object);

// The C++ object behind the value at `idx`, which must be of kind T.
template <class T>
T require_celos_object(duk_context* ctx, duk_idx_t idx, const char* fn, const std::string& what) {
  FileScope& scope = scope_of(ctx);
  constexpr std::size_t kind = kind_index<T>();
  const std::string expected = fmt::format("celos.{}: {} must be {} made by {}", fn, what,
                                           kKindNames[kind], kKindMakers[kind]);
  if (!is_plain_object(ctx, idx))
    throw_error(ctx, fmt::format("{}, got {}", expected, type_of(ctx, idx)));
  if (!duk_get_prop_string(ctx, idx, kObjectKey)) {
    duk_pop(ctx);
    throw_error(ctx, expected + ", got a plain object");
  }
  const auto index = static_cast<std::size_t>(duk_get_uint(ctx, -1));
  duk_pop(ctx);
  if (index >= scope.objects.size()) throw_error(ctx, expected + ", got a stale object");
  const CelosObject& object = scope.objects[index];
  if (object.index() != kind) {
    throw_error(ctx, fmt::format("{}, got {}", expected, kKindNames[object.index()]));
  }
  return std::get<T>(object);
}

}  // namespace celos::js
