// Backfill plan records as the state database stores them (celos/backfill.h): one JSON object
// per plan, written whole. Unknown keys are ignored, so later versions may add some.
#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/backfill.h"

namespace celos {
namespace json = boost::json;

std::string backfill_to_json(const BackfillPlan& plan) {
  json::object o;
  o["id"] = plan.id;
  o["state"] = std::string(to_string(plan.state));
  json::array workflows;
  for (const std::string& w : plan.workflows) workflows.emplace_back(w);
  o["workflows"] = std::move(workflows);
  o["start"] = format_time(plan.start);
  o["end"] = format_time(plan.end);
  o["reprocess"] = std::string(to_string(plan.reprocess));
  o["order"] = std::string(to_string(plan.order));
  o["maxRunning"] = plan.max_running;
  o["created"] = format_time(plan.created);
  o["by"] = plan.by;
  o["finished"] = plan.finished ? json::value(format_time(*plan.finished)) : json::value(nullptr);
  o["total"] = plan.total;
  json::object cursors;
  for (const auto& [w, t] : plan.cursors) cursors[w] = format_time(t);
  o["cursors"] = std::move(cursors);
  json::array in_flight;
  for (const SlotId& id : plan.in_flight) {
    in_flight.push_back(json::object{{"workflow", id.workflow}, {"time", format_time(id.time)}});
  }
  o["inFlight"] = std::move(in_flight);
  json::object ended;
  for (const auto& [status, n] : plan.ended) ended[to_string(status)] = n;
  o["ended"] = std::move(ended);
  o["skipped"] = plan.skipped;
  return json::serialize(o);
}

namespace {

Error corrupt(const std::string& what) {
  return Error{"backfill record: " + what, ErrorCode::kCorrupt};
}

// The readers of one key each; they throw std::exception on a wrong type (caught below).
Time time_at(const json::object& o, std::string_view key) {
  auto t = parse_time(std::string_view(o.at(key).as_string()));
  if (!t) throw std::invalid_argument(fmt::format("\"{}\": {}", key, t.error().message));
  return *t;
}

std::size_t count_of(const json::value& v) {
  return static_cast<std::size_t>(v.to_number<int64_t>());
}

void read_progress(const json::object& o, BackfillPlan& plan) {
  for (const auto& [w, t] : o.at("cursors").as_object()) {
    auto parsed = parse_time(std::string_view(t.as_string()));
    if (!parsed) throw std::invalid_argument("\"cursors\": " + parsed.error().message);
    plan.cursors[std::string(w)] = *parsed;
  }
  for (const json::value& v : o.at("inFlight").as_array()) {
    const json::object& slot = v.as_object();
    plan.in_flight.push_back({std::string(slot.at("workflow").as_string()), time_at(slot, "time")});
  }
  for (const auto& [name, n] : o.at("ended").as_object()) {
    auto status = parse_slot_status(std::string_view(name));
    if (!status) throw std::invalid_argument("\"ended\": " + status.error().message);
    plan.ended[*status] = count_of(n);
  }
  plan.skipped = count_of(o.at("skipped"));
}

Result<BackfillPlan> read_plan(const json::object& o) {
  BackfillPlan plan;
  plan.id = std::string(o.at("id").as_string());
  const std::string_view state = o.at("state").as_string();
  bool known = false;
  for (BackfillState s : {BackfillState::kRunning, BackfillState::kPaused,
                          BackfillState::kCancelled, BackfillState::kDone}) {
    if (to_string(s) == state) plan.state = s, known = true;
  }
  if (!known) return tl::unexpected(corrupt(fmt::format("unknown state \"{}\"", state)));
  for (const json::value& w : o.at("workflows").as_array()) {
    plan.workflows.emplace_back(w.as_string());
  }
  plan.start = time_at(o, "start");
  plan.end = time_at(o, "end");
  auto reprocess = parse_reprocess(std::string_view(o.at("reprocess").as_string()));
  auto order = parse_backfill_order(std::string_view(o.at("order").as_string()));
  if (!reprocess) return tl::unexpected(corrupt(reprocess.error().message));
  if (!order) return tl::unexpected(corrupt(order.error().message));
  plan.reprocess = *reprocess;
  plan.order = *order;
  plan.max_running = static_cast<int>(o.at("maxRunning").to_number<int64_t>());
  plan.created = time_at(o, "created");
  plan.by = std::string(o.at("by").as_string());
  if (!o.at("finished").is_null()) plan.finished = time_at(o, "finished");
  plan.total = count_of(o.at("total"));
  read_progress(o, plan);
  return plan;
}

}  // namespace

Result<BackfillPlan> backfill_from_json(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) return tl::unexpected(corrupt("not JSON: " + ec.message()));
  if (!v.is_object()) return tl::unexpected(corrupt("not a JSON object"));
  try {
    return read_plan(v.get_object());
  } catch (const std::exception& e) {
    return tl::unexpected(corrupt(e.what()));
  }
}

}  // namespace celos
