// Calling celos-server's routes for a command: the URL, the bearer token, and the mapping of
// answers to outcomes (no connection = kUnavailable, exit 3; a status >= 400 = kFailed with the
// server's error on one line, exit 1).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "cli/command.h"

namespace celos::cli {

using Params = std::vector<std::pair<std::string, std::string>>;

struct Answer {
  int status = 0;
  std::string body;          // as received: printed unchanged by -o json
  boost::json::value value;  // parsed when the body is JSON, else null
};

// One request answered with any status (only a failed connection is an error).
[[nodiscard]] Result<Answer> call_any(const Context& ctx, std::string_view method,
                                      std::string_view path, const Params& params = {});
// `answer` with a status >= 400 turned into the error (the server's JSON on one line).
[[nodiscard]] Result<Answer> checked(Result<Answer> answer);
// One request; `path` is relative to the server ("/api/v1/cluster"), params are encoded.
[[nodiscard]] Result<Answer> call(const Context& ctx, std::string_view method,
                                  std::string_view path, const Params& params = {});
[[nodiscard]] inline Result<Answer> get(const Context& ctx, std::string_view path,
                                        const Params& params = {}) {
  return call(ctx, "GET", path, params);
}
[[nodiscard]] inline Result<Answer> post(const Context& ctx, std::string_view path,
                                         const Params& params = {}) {
  return call(ctx, "POST", path, params);
}

// --from/--to of `args` (typed times) as start/end parameters in UTC.
[[nodiscard]] Result<void> add_range(const Context& ctx, const Args& args, Params& params);
// id=W and time=T (typed, in UTC).
[[nodiscard]] Result<Params> slot_params(const Context& ctx, const std::string& workflow,
                                         const std::string& time);

// -o json: prints the body as received (a line break added when it has none) and returns
// true; false when -o json is not asked.
bool print_raw(const Context& ctx, const Answer& answer);

// Fields of a JSON object, tolerant of missing ones: "" / 0 / false / empty.
std::string text_of(const boost::json::value& v, std::string_view key);
std::int64_t int_of(const boost::json::value& v, std::string_view key);
bool bool_of(const boost::json::value& v, std::string_view key);
const boost::json::array& array_of(const boost::json::value& v, std::string_view key);

}  // namespace celos::cli
