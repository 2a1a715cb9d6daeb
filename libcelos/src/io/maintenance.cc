// The maintenance mode as stored (SPEC §13), shared by the state database backends.
#include <boost/json.hpp>

#include "celos/state_codecs.h"
#include "celos/state_db.h"

namespace celos {

namespace json = boost::json;

std::string_view to_string(MaintenanceMode mode) {
  switch (mode) {
    case MaintenanceMode::kOff:
      return "off";
    case MaintenanceMode::kDrain:
      return "drain";
    case MaintenanceMode::kPause:
      return "pause";
  }
  return "off";
}

Result<MaintenanceMode> parse_maintenance_mode(std::string_view text) {
  for (auto mode : {MaintenanceMode::kOff, MaintenanceMode::kDrain, MaintenanceMode::kPause}) {
    if (text == to_string(mode)) return mode;
  }
  return fail("maintenance mode must be off, drain or pause, not \"" + std::string(text) + "\"",
              ErrorCode::kInvalid);
}

std::string maintenance_to_json(const Maintenance& maintenance) {
  json::object o{{"mode", to_string(maintenance.mode)}};
  o["reason"] = maintenance.reason ? json::value(*maintenance.reason) : json::value(nullptr);
  o["since"] =
      maintenance.since ? json::value(format_time(*maintenance.since)) : json::value(nullptr);
  return json::serialize(o);
}

Result<Maintenance> maintenance_from_json(std::string_view text) {
  boost::system::error_code ec;
  const json::value v = json::parse(text, ec);
  if (ec || !v.is_object())
    return fail("maintenance record is not a JSON object", ErrorCode::kCorrupt);
  const json::object& o = v.get_object();
  Maintenance out;
  const json::value* mode = o.if_contains("mode");
  if (mode == nullptr || !mode->is_string()) {
    return fail("maintenance record has no \"mode\" string", ErrorCode::kCorrupt);
  }
  auto parsed = parse_maintenance_mode(std::string_view(mode->get_string()));
  if (!parsed) return fail(parsed.error().message, ErrorCode::kCorrupt);
  out.mode = *parsed;
  if (const json::value* r = o.if_contains("reason"); r && !r->is_null()) {
    if (!r->is_string()) return fail("maintenance \"reason\" is not a string", ErrorCode::kCorrupt);
    out.reason = std::string(r->get_string());
  }
  if (const json::value* s = o.if_contains("since"); s && !s->is_null()) {
    auto t = s->is_string() ? parse_time(std::string_view(s->get_string()))
                            : Result<Time>(fail("not a string"));
    if (!t) return fail("maintenance \"since\" is not a time", ErrorCode::kCorrupt);
    out.since = *t;
  }
  return out;
}

}  // namespace celos
