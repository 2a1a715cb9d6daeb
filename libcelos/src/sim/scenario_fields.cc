#include "sim/scenario_fields.h"

#include <fmt/format.h>

#include "sim/scenario.h"

namespace celos::sim {

namespace json = boost::json;

Result<Fields> Fields::of(const json::value& value, std::string path) {
  Fields fields;
  fields.path_ = std::move(path);
  fields.object_ = value.if_object();
  if (fields.object_ == nullptr) {
    return fail(fmt::format("field {}: must be an object",
                            fields.path_.empty() ? "(top level)" : fields.path_),
                ErrorCode::kInvalid);
  }
  return fields;
}

std::string Fields::name(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

bool Fields::has(const std::string& key) const { return object_->contains(key); }

const json::value* Fields::get(const std::string& key) {
  read_.insert(key);
  const json::value* v = object_->if_contains(key);
  return v == nullptr || v->is_null() ? nullptr : v;
}

tl::unexpected<Error> Fields::error(const std::string& key, const std::string& what) const {
  return fail(fmt::format("field {}: {}", name(key), what), ErrorCode::kInvalid);
}

Result<std::optional<std::string>> Fields::text(const std::string& key) {
  const json::value* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) return error(key, "must be a string");
  return std::string(v->get_string());
}

Result<std::string> Fields::required_text(const std::string& key) {
  auto t = text(key);
  if (!t) return tl::unexpected(t.error());
  if (!*t || (*t)->empty()) return error(key, "is required (a non-empty string)");
  return **t;
}

Result<std::pair<std::string, std::string>> Fields::either(const std::string& a,
                                                           const std::string& b) {
  auto first = text(a);
  if (!first) return tl::unexpected(first.error());
  auto second = text(b);
  if (!second) return tl::unexpected(second.error());
  if (first->has_value() == second->has_value()) {
    return error(a, fmt::format("give exactly one of \"{}\" and \"{}\"", a, b));
  }
  return std::pair{first->value_or(""), second->value_or("")};
}

Result<std::optional<Time>> Fields::time(const std::string& key) {
  auto t = text(key);
  if (!t) return tl::unexpected(t.error());
  if (!*t) return std::nullopt;
  auto parsed = parse_time(**t);
  if (!parsed) return error(key, parsed.error().message);
  return *parsed;
}

Result<Time> Fields::required_time(const std::string& key) {
  auto t = time(key);
  if (!t) return tl::unexpected(t.error());
  if (!*t) return error(key, "is required (an ISO 8601 UTC time such as 2015-09-13T00:00Z)");
  return **t;
}

Result<std::optional<Seconds>> Fields::duration(const std::string& key) {
  const json::value* v = get(key);
  if (v == nullptr) return std::nullopt;
  Result<Seconds> d = fail("", ErrorCode::kInvalid);
  if (v->is_int64() || v->is_uint64()) {
    d = parse_duration(fmt::format("{}", v->is_int64() ? v->get_int64() : v->get_uint64()));
  } else if (v->is_string()) {
    d = parse_duration(std::string(v->get_string()));
  } else {
    return error(key, "must be a duration (seconds, or a string such as \"10m\", \"1h30m\")");
  }
  if (!d) return error(key, d.error().message);
  return *d;
}

Result<std::optional<std::int64_t>> Fields::integer(const std::string& key) {
  const json::value* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64() && v->get_uint64() <= std::uint64_t(INT64_MAX)) {
    return std::int64_t(v->get_uint64());
  }
  return error(key, "must be an integer");
}

Result<std::optional<double>> Fields::number(const std::string& key) {
  const json::value* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) return error(key, "must be a number");
  return v->to_number<double>();
}

Result<std::optional<bool>> Fields::boolean(const std::string& key) {
  const json::value* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_bool()) return error(key, "must be true or false");
  return v->get_bool();
}

Result<std::optional<SlotStatus>> Fields::status(const std::string& key) {
  auto t = text(key);
  if (!t) return tl::unexpected(t.error());
  if (!*t) return std::nullopt;
  auto s = parse_slot_status(**t);
  if (!s) {
    return error(key, fmt::format("unknown state \"{}\" (WAITING, READY, RUNNING, SUCCESS, "
                                  "FAILURE, WAIT_TIMEOUT or KILLED)",
                                  **t));
  }
  return *s;
}

Result<std::vector<const json::value*>> Fields::list(const std::string& key) {
  std::vector<const json::value*> out;
  const json::value* v = get(key);
  if (v == nullptr) return out;
  if (const json::array* a = v->if_array()) {
    for (const json::value& e : *a) out.push_back(&e);
  } else {
    out.push_back(v);
  }
  return out;
}

Result<std::vector<Time>> Fields::times(const std::string& key) {
  auto items = list(key);
  if (!items) return tl::unexpected(items.error());
  std::vector<Time> out;
  for (std::size_t i = 0; i < items->size(); ++i) {
    const json::value& v = *(*items)[i];
    const std::string where = fmt::format("{}[{}]", key, i);
    if (!v.is_string()) return error(where, "must be a time string");
    auto t = parse_time(std::string(v.get_string()));
    if (!t) return error(where, t.error().message);
    out.push_back(*t);
  }
  return out;
}

Result<const json::object*> Fields::object(const std::string& key) {
  const json::value* v = get(key);
  if (v == nullptr) return nullptr;
  if (!v->is_object()) return error(key, "must be an object");
  return &v->get_object();
}

Result<void> Fields::no_other_keys() const {
  for (const auto& entry : *object_) {
    const std::string key(entry.key());
    if (!read_.count(key)) return error(key, "unknown key (docs/simulate.md lists the keys)");
  }
  return {};
}

}  // namespace celos::sim
