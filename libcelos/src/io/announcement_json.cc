// The announced dataset instances as the file backend stores them (SPEC §14, celos/state_codecs.h):
//   {"time":"<instance>","announced":"<when>"}   a line of datasets/<dataset>/<day>.jsonl
//   {"announced":"<when>"}                       the file of one instance (earlier versions)
#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/state_codecs.h"

namespace celos {
namespace json = boost::json;

namespace {

// The time under `key` of the JSON object `v`.
Result<Time> announcement_time(const json::value& v, std::string_view key) {
  const json::value* t = v.is_object() ? v.get_object().if_contains(key) : nullptr;
  if (!t || !t->is_string()) return fail(fmt::format("no \"{}\" time", key), ErrorCode::kCorrupt);
  auto parsed = parse_time(std::string_view(t->get_string()));
  if (!parsed) {
    return fail(fmt::format("\"{}\": {}", key, parsed.error().message), ErrorCode::kCorrupt);
  }
  return *parsed;
}

Result<json::value> announcement_json(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return fail("not a JSON object", ErrorCode::kCorrupt);
  return v;
}

}  // namespace

std::string announcement_line_to_json(const AnnouncementLine& line) {
  json::object o;
  o["time"] = format_time(line.time);
  o["announced"] = format_time(line.announced);
  return json::serialize(o);
}

Result<AnnouncementLine> announcement_line_from_json(std::string_view line) {
  auto v = announcement_json(line);
  if (!v) return tl::unexpected(v.error());
  auto time = announcement_time(*v, "time");
  if (!time) return tl::unexpected(time.error());
  auto announced = announcement_time(*v, "announced");
  if (!announced) return tl::unexpected(announced.error());
  return AnnouncementLine{*time, *announced};
}

Result<Time> announcement_file_from_json(std::string_view json) {
  auto v = announcement_json(json);
  if (!v) return tl::unexpected(v.error());
  return announcement_time(*v, "announced");
}

}  // namespace celos
