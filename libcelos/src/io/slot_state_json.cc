// Slot records as JSON (SPEC §5, §16): the four keys of the original Celos plus the optional
// ones of part two, written only when set.
#include <limits>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/state_codecs.h"
#include "celos/state_db.h"

namespace celos {
namespace json = boost::json;

std::string slot_state_to_json(const SlotState& state, bool with_time) {
  json::object o;
  if (with_time) o["time"] = format_time(state.id.time);
  o["status"] = std::string(to_string(state.status));
  if (state.external_id) {
    o["externalID"] = *state.external_id;
  } else {
    o["externalID"] = nullptr;
  }
  o["retryCount"] = state.retry_count;
  if (state.message) o["message"] = *state.message;
  if (state.retry_at) o["retryAt"] = format_time(*state.retry_at);
  if (state.backfill) o["backfill"] = *state.backfill;
  if (state.run_id) o["runId"] = *state.run_id;
  if (!state.consumed.empty()) {
    json::object consumed;
    for (const auto& [dataset, times] : state.consumed) {
      json::array list;
      for (Time t : times) list.emplace_back(format_time(t));
      consumed[dataset] = std::move(list);
    }
    o["consumed"] = std::move(consumed);
  }
  if (state.deadline) o["deadline"] = format_time(*state.deadline);
  if (state.deadline_state) o["deadlineState"] = std::string(to_string(*state.deadline_state));
  return json::serialize(o);
}

namespace {

Result<Time> stored_time(const json::value& v, std::string_view key) {
  if (!v.is_string())
    return fail(fmt::format("\"{}\" is not a time string", key), ErrorCode::kCorrupt);
  auto t = parse_time(std::string_view(v.get_string()));
  if (!t) return fail(fmt::format("\"{}\": {}", key, t.error().message), ErrorCode::kCorrupt);
  return *t;
}

// "deadline" and "deadlineState" (celos/deadline.h).
Result<SlotState> read_deadline_keys(const json::object& o, SlotState state) {
  if (const json::value* d = o.if_contains("deadline"); d && !d->is_null()) {
    auto t = stored_time(*d, "deadline");
    if (!t) return tl::unexpected(t.error());
    state.deadline = *t;
  }
  if (const json::value* d = o.if_contains("deadlineState"); d && !d->is_null()) {
    if (!d->is_string()) return fail("\"deadlineState\" is not a string", ErrorCode::kCorrupt);
    auto parsed = parse_deadline_state(std::string_view(d->get_string()));
    if (!parsed) return fail("\"deadlineState\": " + parsed.error().message, ErrorCode::kCorrupt);
    state.deadline_state = *parsed;
  }
  return state;
}

// The keys of SPEC §16 that only some records carry.
Result<SlotState> read_optional_keys(const json::object& o, SlotState state) {
  if (const json::value* m = o.if_contains("message"); m && !m->is_null()) {
    if (!m->is_string()) return fail("\"message\" is not a string", ErrorCode::kCorrupt);
    state.message = std::string(m->get_string());
  }
  if (const json::value* r = o.if_contains("retryAt"); r && !r->is_null()) {
    auto t = stored_time(*r, "retryAt");
    if (!t) return tl::unexpected(t.error());
    state.retry_at = *t;
  }
  if (const json::value* b = o.if_contains("backfill"); b && !b->is_null()) {
    if (!b->is_string()) return fail("\"backfill\" is not a string", ErrorCode::kCorrupt);
    state.backfill = std::string(b->get_string());
  }
  if (const json::value* r = o.if_contains("runId"); r && !r->is_null()) {
    if (!r->is_string()) return fail("\"runId\" is not a string", ErrorCode::kCorrupt);
    state.run_id = std::string(r->get_string());
  }
  if (const json::value* c = o.if_contains("consumed"); c && !c->is_null()) {
    if (!c->is_object()) return fail("\"consumed\" is not an object", ErrorCode::kCorrupt);
    for (const auto& [dataset, times] : c->get_object()) {
      if (!times.is_array()) return fail("\"consumed\" entries must be lists", ErrorCode::kCorrupt);
      auto& list = state.consumed[std::string(dataset)];
      for (const json::value& t : times.get_array()) {
        auto parsed = stored_time(t, "consumed");
        if (!parsed) return tl::unexpected(parsed.error());
        list.push_back(*parsed);
      }
    }
  }
  return read_deadline_keys(o, std::move(state));
}

}  // namespace

Result<SlotState> slot_state_from_json(const SlotId& id, std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) return fail(fmt::format("not JSON: {}", ec.message()), ErrorCode::kCorrupt);
  const json::object* o = v.if_object();
  if (!o) return fail("not a JSON object", ErrorCode::kCorrupt);
  SlotState state = SlotState::waiting(id);
  const json::value* status = o->if_contains("status");
  if (!status || !status->is_string()) return fail("no \"status\" string", ErrorCode::kCorrupt);
  auto parsed = parse_slot_status(std::string_view(status->get_string()));
  if (!parsed) return fail(parsed.error().message, ErrorCode::kCorrupt);
  state.status = *parsed;
  if (const json::value* ext = o->if_contains("externalID"); ext && !ext->is_null()) {
    if (!ext->is_string()) return fail("\"externalID\" is not a string", ErrorCode::kCorrupt);
    state.external_id = std::string(ext->get_string());
  }
  if (const json::value* retry = o->if_contains("retryCount"); retry && !retry->is_null()) {
    // A count: an integer from 0 to INT_MAX (Boost.JSON keeps larger ones as uint64 or double,
    // which to_number would throw on).
    if (!retry->is_int64() || retry->get_int64() < 0 ||
        retry->get_int64() > std::numeric_limits<int>::max()) {
      return fail("\"retryCount\" is not a count (an integer from 0 to 2147483647)",
                  ErrorCode::kCorrupt);
    }
    state.retry_count = static_cast<int>(retry->get_int64());
  }
  return read_optional_keys(*o, state);
}

}  // namespace celos
