// How the API's routes are declared (RouteTable): handlers are plain functions of the Api and
// the request, bound here; date-time parameters are described once.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "celos/api.h"
#include "celos/route_table.h"

namespace celos {

// A handler of (api, request) or of (api) alone, as the RouteTable calls it. `api` must outlive
// the table.
template <class F>
RouteHandler bind_api(const Api& api, F f) {
  if constexpr (std::is_invocable_v<F, const Api&, const HttpServerRequest&>) {
    return [&api, f](const HttpServerRequest& request) { return f(api, request); };
  } else {
    return [&api, f](const HttpServerRequest&) { return f(api); };
  }
}

// A query parameter that is a time (RFC 3339), for the OpenAPI document.
inline RouteParam time_route_param(std::string name, bool required, std::string description) {
  return {.name = std::move(name),
          .format = "date-time",
          .required = required,
          .description = std::move(description)};
}

}  // namespace celos
