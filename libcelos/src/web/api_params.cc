#include "api_params.h"

#include <charconv>

#include "celos/scheduler.h"

namespace celos {

namespace json = boost::json;

HttpServerResponse json_response(const json::value& value, int status) {
  HttpServerResponse response;
  response.status = status;
  response.body = json::serialize(value);
  return response;
}

HttpServerResponse error_response(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalid:
      return json_error(400, error.message);
    case ErrorCode::kNotFound:
      return json_error(404, error.message);
    case ErrorCode::kFailed:
      return json_error(502, error.message);
    case ErrorCode::kUnavailable:
      return json_error(502, error.message);
    case ErrorCode::kCorrupt:
      return json_error(500, error.message);
  }
  return json_error(500, error.message);
}

Result<bool> dry_run_param(const HttpServerRequest& request) {
  const std::string* value = query_param(request, "dryRun");
  if (value == nullptr || *value == "false") return false;
  if (*value == "true") return true;
  return fail("parameter dryRun: must be true or false, not \"" + *value + "\"",
              ErrorCode::kInvalid);
}

Result<std::string> required_param(const HttpServerRequest& request, const std::string& name) {
  const std::string* value = query_param(request, name);
  if (value == nullptr) return fail("missing parameter: " + name, ErrorCode::kInvalid);
  if (value->empty()) return fail("empty parameter: " + name, ErrorCode::kInvalid);
  return *value;
}

Result<std::optional<Time>> optional_time_param(const HttpServerRequest& request,
                                                const std::string& name) {
  const std::string* value = query_param(request, name);
  if (value == nullptr) return std::optional<Time>{};
  auto time = parse_time(*value);
  if (!time) return fail("parameter " + name + ": " + time.error().message, ErrorCode::kInvalid);
  return std::optional<Time>{*time};
}

Result<Time> required_time_param(const HttpServerRequest& request, const std::string& name) {
  if (query_param(request, name) == nullptr) {
    return fail("missing parameter: " + name, ErrorCode::kInvalid);
  }
  return optional_time_param(request, name).map([](auto t) { return *t; });
}

Result<long long> int_param(const HttpServerRequest& request, const std::string& name,
                            long long fallback, long long min, long long max) {
  const std::string* text = query_param(request, name);
  if (text == nullptr) return fallback;
  long long value = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc{} || ptr != end || value < min || value > max) {
    return fail("parameter " + name + ": must be an integer from " + std::to_string(min) + " to " +
                    std::to_string(max),
                ErrorCode::kInvalid);
  }
  return value;
}

Result<SlotId> slot_params(const HttpServerRequest& request) {
  auto id = required_param(request, "id");
  if (!id) return tl::unexpected(id.error());
  auto time = required_time_param(request, "time");
  if (!time) return tl::unexpected(time.error());
  return SlotId{*id, *time};
}

Result<std::pair<Time, Time>> slot_range(const HttpServerRequest& request, Time now) {
  auto start = optional_time_param(request, "start");
  if (!start) return tl::unexpected(start.error());
  auto end = optional_time_param(request, "end");
  if (!end) return tl::unexpected(end.error());
  const Time to = end->value_or(now);
  const Time from = start->value_or(to - kSlidingWindow);
  if (from > to) return fail("parameter start: must not be after end", ErrorCode::kInvalid);
  if (to - from > kSlidingWindow) {
    return fail("parameters start and end: at most 7 days per request", ErrorCode::kInvalid);
  }
  return std::make_pair(from, to);
}

std::set<std::string> split_list(std::string_view rest) {
  std::set<std::string> out;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace(item);
  }
  return out;
}

}  // namespace celos
