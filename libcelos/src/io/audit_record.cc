// An audit record as one JSON line, and the bound on its fields (celos/audit.h).
#include <algorithm>

#include <boost/json.hpp>

#include "celos/audit.h"

namespace celos {
namespace {

namespace json = boost::json;

// Cuts `value` to at most `limit` bytes, backing off a UTF-8 continuation byte so that no
// character is split; notes the original size under `name`.
void bound(std::string& value, std::size_t limit, const char* name, AuditRecord& record) {
  if (value.size() <= limit) return;
  record.truncated[name] = value.size();
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(value[end]) & 0xC0) == 0x80) --end;
  value.resize(end);
}

}  // namespace

void bound_audit_record(AuditRecord& r) {
  using L = AuditFieldLimits;
  bound(r.node, L::kNode, "node", r);
  bound(r.client, L::kClient, "client", r);
  if (r.token) bound(*r.token, L::kToken, "token", r);
  bound(r.method, L::kMethod, "method", r);
  bound(r.path, L::kPath, "path", r);
  bound(r.query, L::kQuery, "query", r);
}

std::string audit_record_to_json(const AuditRecord& r) {
  json::object o{{"time", format_time(r.time)},
                 {"node", r.node},
                 {"client", r.client},
                 {"token", r.token ? json::value(*r.token) : json::value(nullptr)},
                 {"method", r.method},
                 {"path", r.path},
                 {"query", r.query},
                 {"status", r.status}};
  if (!r.truncated.empty()) {
    json::object cut;
    for (const auto& [field, size] : r.truncated) cut[field] = size;
    o["truncated"] = std::move(cut);
  }
  if (r.suppressed > 0) o["suppressed"] = r.suppressed;
  return json::serialize(o);
}

Result<AuditRecord> audit_record_from_json(std::string_view text) {
  boost::system::error_code ec;
  const json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return fail("audit record is not a JSON object", ErrorCode::kCorrupt);
  const json::object& o = v.get_object();
  AuditRecord r;
  auto str = [&o](const char* key) -> std::string {
    const json::value* x = o.if_contains(key);
    return x && x->is_string() ? std::string(x->get_string()) : std::string();
  };
  auto time = parse_time(str("time"));
  if (!time) return fail("audit record without a time", ErrorCode::kCorrupt);
  r.time = *time;
  r.node = str("node");
  r.client = str("client");
  if (const json::value* t = o.if_contains("token"); t && t->is_string()) r.token = str("token");
  r.method = str("method");
  r.path = str("path");
  r.query = str("query");
  if (const json::value* s = o.if_contains("status"); s && s->is_int64()) {
    r.status = static_cast<int>(s->get_int64());
  }
  if (const json::value* t = o.if_contains("truncated"); t && t->is_object()) {
    for (const auto& [field, size] : t->get_object()) {
      if (size.is_int64() && size.get_int64() >= 0) {
        r.truncated[std::string(field)] = static_cast<std::size_t>(size.get_int64());
      }
    }
  }
  if (const json::value* n = o.if_contains("suppressed"); n && n->is_int64()) {
    r.suppressed = static_cast<std::uint64_t>(std::max<std::int64_t>(0, n->get_int64()));
  }
  return r;
}

}  // namespace celos
