// Requests of the command line. One request per call, no retries: a command is an operator's
// question, and a 503 (no leader, shutting down) is an answer worth seeing.
#include "cli/remote.h"

#include <fmt/format.h>

#include "cli/format.h"
#include "cli/parse.h"

namespace celos::cli {

namespace json = boost::json;

namespace {

std::string url_of(const Context& ctx, std::string_view path, const Params& params) {
  std::string url = ctx.globals.server + std::string(path);
  char separator = '?';
  for (const auto& [name, value] : params) {
    url += separator + name + "=" + url_encode(value);
    separator = '&';
  }
  return url;
}

}  // namespace

Result<Answer> call_any(const Context& ctx, std::string_view method, std::string_view path,
                        const Params& params) {
  HttpRequest request;
  request.method = std::string(method);
  request.url = url_of(ctx, path, params);
  if (!ctx.globals.token.empty()) {
    request.headers.emplace_back("Authorization", "Bearer " + ctx.globals.token);
  }
  auto response = ctx.http.send(request);
  if (!response) {
    return fail(fmt::format("no connection to celos-server at {}: {}", ctx.globals.server,
                            response.error().message),
                ErrorCode::kUnavailable);
  }
  Answer answer{response->status, std::move(response->body), nullptr};
  // One arena for the whole tree: `celos status` parses megabytes of small objects, and
  // malloc per node was most of its time.
  boost::system::error_code ec;
  json::value value =
      json::parse(answer.body, ec, json::make_shared_resource<json::monotonic_resource>());
  if (!ec) answer.value = std::move(value);
  return answer;
}

Result<void> add_range(const Context& ctx, const Args& args, Params& params) {
  for (const auto& [option, name] : {std::pair{"--from", "start"}, std::pair{"--to", "end"}}) {
    if (const std::string* text = args.value(option)) {
      auto t = server_time(*text, ctx.globals, option);
      if (!t) return tl::unexpected(t.error());
      params.emplace_back(name, *t);
    }
  }
  return {};
}

Result<Params> slot_params(const Context& ctx, const std::string& workflow,
                           const std::string& time) {
  auto t = server_time(time, ctx.globals, "T");
  if (!t) return tl::unexpected(t.error());
  return Params{{"id", workflow}, {"time", *t}};
}

Result<Answer> checked(Result<Answer> answer) {
  if (answer && answer->status >= 400) {
    return fail(
        fmt::format("celos-server answered {}: {}", answer->status, one_line(answer->body)));
  }
  return answer;
}

Result<Answer> call(const Context& ctx, std::string_view method, std::string_view path,
                    const Params& params) {
  return checked(call_any(ctx, method, path, params));
}

bool print_raw(const Context& ctx, const Answer& answer) {
  if (!ctx.globals.json) return false;
  ctx.out << answer.body;
  if (answer.body.empty() || answer.body.back() != '\n') ctx.out << '\n';
  return true;
}

std::string text_of(const json::value& v, std::string_view key) {
  const json::object* o = v.if_object();
  const json::value* field = o ? o->if_contains(key) : nullptr;
  if (field == nullptr || field->is_null()) return "";
  if (field->is_string()) return std::string(field->get_string());
  return json::serialize(*field);
}

std::int64_t int_of(const json::value& v, std::string_view key) {
  const json::object* o = v.if_object();
  const json::value* field = o ? o->if_contains(key) : nullptr;
  if (field == nullptr) return 0;
  if (field->is_int64()) return field->get_int64();
  if (field->is_uint64()) return static_cast<std::int64_t>(field->get_uint64());
  return 0;
}

bool bool_of(const json::value& v, std::string_view key) {
  const json::object* o = v.if_object();
  const json::value* field = o ? o->if_contains(key) : nullptr;
  return field != nullptr && field->is_bool() && field->get_bool();
}

const json::array& array_of(const json::value& v, std::string_view key) {
  static const json::array kEmpty;
  const json::object* o = v.if_object();
  const json::value* field = o ? o->if_contains(key) : nullptr;
  return field != nullptr && field->is_array() ? field->get_array() : kEmpty;
}

}  // namespace celos::cli
