// The lines of the slot history files (SPEC §13): one JSON object per change,
//   {"time":"<slot>","at":"…","from":"READY"|null,"to":"RUNNING","externalID":…,"retryCount":N,
//    "by":"step","message"?:"…"}
#include <limits>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/state_codecs.h"
#include "celos/state_db.h"

namespace celos {
namespace json = boost::json;

std::string history_entry_to_json(const SlotHistoryEntry& e) {
  json::object o;
  o["time"] = format_time(e.to.id.time);
  o["at"] = format_time(e.at);
  if (e.from) {
    o["from"] = std::string(to_string(*e.from));
  } else {
    o["from"] = nullptr;
  }
  o["to"] = std::string(to_string(e.to.status));
  if (e.to.external_id) {
    o["externalID"] = *e.to.external_id;
  } else {
    o["externalID"] = nullptr;
  }
  o["retryCount"] = e.to.retry_count;
  o["by"] = e.by;
  if (e.to.message) o["message"] = *e.to.message;
  if (e.to.retry_at) o["retryAt"] = format_time(*e.to.retry_at);
  return json::serialize(o);
}

namespace {

Result<std::string> string_key(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (!v || !v->is_string()) return fail(fmt::format("no \"{}\" string", key), ErrorCode::kCorrupt);
  return std::string(v->get_string());
}

Result<Time> time_key(const json::object& o, std::string_view key) {
  auto text = string_key(o, key);
  if (!text) return tl::unexpected(text.error());
  auto t = parse_time(*text);
  if (!t) return fail(fmt::format("\"{}\": {}", key, t.error().message), ErrorCode::kCorrupt);
  return *t;
}

Result<SlotStatus> status_key(const json::object& o, std::string_view key) {
  auto text = string_key(o, key);
  if (!text) return tl::unexpected(text.error());
  auto s = parse_slot_status(*text);
  if (!s) return fail(s.error().message, ErrorCode::kCorrupt);
  return *s;
}

}  // namespace

Result<SlotHistoryEntry> history_entry_from_json(std::string_view workflow, std::string_view line) {
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  if (ec || !v.is_object()) return fail("not a JSON object", ErrorCode::kCorrupt);
  const json::object& o = v.get_object();
  auto time = time_key(o, "time");
  if (!time) return tl::unexpected(time.error());
  SlotHistoryEntry e;
  e.to = SlotState::waiting(SlotId{std::string(workflow), *time});
  auto at = time_key(o, "at");
  if (!at) return tl::unexpected(at.error());
  e.at = *at;
  if (const json::value* from = o.if_contains("from"); from && !from->is_null()) {
    auto s = status_key(o, "from");
    if (!s) return tl::unexpected(s.error());
    e.from = *s;
  }
  auto to = status_key(o, "to");
  if (!to) return tl::unexpected(to.error());
  e.to.status = *to;
  if (const json::value* ext = o.if_contains("externalID"); ext && ext->is_string()) {
    e.to.external_id = std::string(ext->get_string());
  }
  if (const json::value* r = o.if_contains("retryCount");
      r && r->is_int64() && r->get_int64() >= 0 &&
      r->get_int64() <= std::numeric_limits<int>::max()) {
    e.to.retry_count = static_cast<int>(r->get_int64());
  }
  if (const json::value* m = o.if_contains("message"); m && m->is_string()) {
    e.to.message = std::string(m->get_string());
  }
  if (o.contains("retryAt")) {
    auto r = time_key(o, "retryAt");
    if (!r) return tl::unexpected(r.error());
    e.to.retry_at = *r;
  }
  auto by = string_key(o, "by");
  if (!by) return tl::unexpected(by.error());
  e.by = std::move(*by);
  return e;
}

}  // namespace celos
