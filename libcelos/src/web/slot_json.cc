#include "slot_json.h"

namespace celos {

namespace json = boost::json;

namespace {

void append_digits(std::string& out, int value, int width) {
  char digits[8];
  for (int i = width - 1; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  out.append(digits, static_cast<std::size_t>(width));
}

}  // namespace

void append_time(std::string& out, Time t) {
  const CivilTime c = to_civil(t);
  append_digits(out, c.year, 4);
  out += '-';
  append_digits(out, c.month, 2);
  out += '-';
  append_digits(out, c.day, 2);
  out += 'T';
  append_digits(out, c.hour, 2);
  out += ':';
  append_digits(out, c.minute, 2);
  out += ':';
  append_digits(out, c.second, 2);
  out += '.';
  append_digits(out, c.millisecond, 3);
  out += 'Z';
}

void append_slot(std::string& out, const SlotState& state) {
  out += R"({"time":")";
  append_time(out, state.id.time);
  out += R"(","status":")";
  out += to_string(state.status);
  out += R"(","externalID":)";
  out += state.external_id ? json::serialize(json::string_view(*state.external_id)) : "null";
  out += R"(,"retryCount":)";
  out += std::to_string(state.retry_count);
  // SPEC §16's optional keys, only where used: why the last attempt failed, when a retry may run.
  if (state.message) {
    out += R"(,"message":)";
    out += json::serialize(json::string_view(*state.message));
  }
  if (state.retry_at) {
    out += R"(,"retryAt":")";
    append_time(out, *state.retry_at);
    out += '"';
  }
  if (state.backfill) {  // the backfill plan that owns the slot (issue 29)
    out += R"(,"backfill":)";
    out += json::serialize(json::string_view(*state.backfill));
  }
  if (state.deadline) {  // issue 27: fixed when the slot was first stored
    out += R"(,"deadline":")";
    append_time(out, *state.deadline);
    out += '"';
  }
  if (state.run_id) {  // the running attempt's OpenLineage run (celos/lineage.h)
    out += R"(,"runId":)";
    out += json::serialize(json::string_view(*state.run_id));
  }
  out += '}';
}

HttpServerResponse slot_response(const SlotState& state) {
  HttpServerResponse response;
  append_slot(response.body, state);
  return response;
}

json::object trigger_json(const TriggerStatus& status) {
  json::array subs;
  for (const auto& sub : status.sub_statuses) subs.push_back(trigger_json(sub));
  return json::object{{"type", status.type},
                      {"ready", status.ready},
                      {"description", status.description},
                      {"subStatuses", std::move(subs)}};
}

Result<void> append_workflow_slots(std::string& body, Scheduler& scheduler,
                                   const Workflow& workflow, std::pair<Time, Time> range) {
  auto slots = scheduler.workflow_slots(workflow.id, range.first, range.second);
  if (!slots) return tl::unexpected(slots.error());
  auto paused = scheduler.is_paused(workflow.id);
  if (!paused) return tl::unexpected(paused.error());
  json::array contacts;
  for (const auto& c : workflow.contacts) {
    contacts.push_back(json::object{{"name", c.name}, {"email", c.email}});
  }
  json::object info{{"url", workflow.url ? json::value(*workflow.url) : json::value(nullptr)},
                    {"contacts", std::move(contacts)}};
  body.reserve(body.size() + 200 + slots->size() * 100);
  body += R"("info":)";
  body += json::serialize(info);
  body += *paused ? R"(,"paused":true,"slots":[)" : R"(,"paused":false,"slots":[)";
  for (std::size_t i = 0; i < slots->size(); ++i) {
    if (i > 0) body += ',';
    append_slot(body, (*slots)[i]);
  }
  body += ']';
  return {};
}

}  // namespace celos
