// Reading celos-server for the UI. The batch endpoint answers the whole page in one request;
// older servers only have /workflow-slots, so the reader falls back to one request per workflow,
// a few in parallel, and tries the batch again a minute later (the server may be upgraded
// underneath a running UI).
#include <algorithm>
#include <atomic>
#include <thread>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/ui.h"
#include "ui/html.h"

namespace celos {

namespace json = boost::json;

namespace {

constexpr auto kBatchRetry = std::chrono::minutes(1);

std::int64_t monotonic_ms(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.monotonic().time_since_epoch())
      .count();
}

ErrorCode code_of_status(int status) {
  if (status == 400) return ErrorCode::kInvalid;
  if (status == 404) return ErrorCode::kNotFound;
  return ErrorCode::kFailed;
}

Result<HttpResponse> send(HttpClient& client, std::string method, std::string url) {
  HttpRequest request;
  request.method = std::move(method);
  request.url = std::move(url);
  auto response = client.send(request);
  if (!response) {
    return fail(fmt::format("celos-server is not reachable: {}", response.error().message));
  }
  return response;
}

Result<json::value> parse_json_answer(const HttpResponse& response, std::string_view what) {
  if (response.status != 200) {
    return fail(fmt::format("{}: {}", what, celos_error_text(response)),
                code_of_status(response.status));
  }
  boost::system::error_code ec;
  json::value body = json::parse(response.body, ec);
  if (ec || !body.is_object()) {
    return fail(fmt::format("{}: celos-server did not answer a JSON object", what));
  }
  return body;
}

Result<UiSlot> parse_slot(const json::value& value) {
  const json::object* obj = value.if_object();
  const json::value* time = obj ? obj->if_contains("time") : nullptr;
  const json::value* status = obj ? obj->if_contains("status") : nullptr;
  if (time == nullptr || !time->is_string() || status == nullptr || !status->is_string()) {
    return fail("a slot without \"time\" or \"status\"", ErrorCode::kCorrupt);
  }
  UiSlot slot;
  auto t = parse_time(std::string_view(time->as_string()));
  if (!t) return tl::unexpected(t.error());
  slot.time = *t;
  auto s = parse_ui_status(std::string_view(status->as_string()));
  if (!s) return tl::unexpected(s.error());
  slot.status = *s;
  if (const json::value* ext = obj->if_contains("externalID"); ext && ext->is_string()) {
    slot.external_id = std::string(ext->as_string());
  }
  if (const json::value* retry = obj->if_contains("retryCount"); retry && retry->is_int64()) {
    slot.retry_count = static_cast<int>(retry->as_int64());
  }
  if (const json::value* plan = obj->if_contains("backfill"); plan && plan->is_string()) {
    slot.backfill = std::string(plan->as_string());
  }
  return slot;
}

// Fills `wf` from a /workflow-slots answer (or one element of the batch); never fails: problems
// end up in wf.error so that they show in that workflow's row only.
void fill_workflow(UiWorkflow& wf, const json::object& obj) {
  if (const json::value* e = obj.if_contains("error"); e && e->is_string()) {
    wf.error = std::string(e->as_string());
  }
  if (const json::value* p = obj.if_contains("paused"); p && p->is_bool()) wf.paused = p->as_bool();
  const json::value* slots = obj.if_contains("slots");
  if (slots == nullptr || !slots->is_array()) {
    if (!wf.error) wf.error = "celos-server sent no slots";
    return;
  }
  wf.slots.reserve(slots->as_array().size());
  for (const json::value& s : slots->as_array()) {
    auto slot = parse_slot(s);
    if (!slot) {
      wf.error = fmt::format("unreadable slot from celos-server: {}", slot.error().message);
      wf.slots.clear();
      return;
    }
    wf.slots.push_back(*slot);
  }
}

void sort_by_id(std::vector<UiWorkflow>& workflows) {
  std::sort(workflows.begin(), workflows.end(),
            [](const UiWorkflow& a, const UiWorkflow& b) { return a.id < b.id; });
}

// The workflows of a 200 answer of /multi-workflow-slots, sorted by id.
Result<std::vector<UiWorkflow>> batch_workflows(const HttpResponse& response) {
  auto body = parse_json_answer(response, "/multi-workflow-slots");
  if (!body) return tl::unexpected(body.error());
  const json::value* list = body->as_object().if_contains("workflows");
  if (list == nullptr || !list->is_array()) {
    return fail("/multi-workflow-slots: no \"workflows\" list in celos-server's answer");
  }
  std::vector<UiWorkflow> workflows;
  workflows.reserve(list->as_array().size());
  for (const json::value& item : list->as_array()) {
    const json::object* obj = item.if_object();
    const json::value* id = obj ? obj->if_contains("id") : nullptr;
    if (id == nullptr || !id->is_string()) continue;
    UiWorkflow wf;
    wf.id = std::string(id->as_string());
    fill_workflow(wf, *obj);
    workflows.push_back(std::move(wf));
  }
  sort_by_id(workflows);
  return workflows;
}

// The workflows of /workflow-list (older servers), sorted by id, without their slots yet.
Result<std::vector<UiWorkflow>> read_workflow_list(HttpClient& client, const std::string& url) {
  auto list_response = send(client, "GET", url + "/workflow-list");
  if (!list_response) return tl::unexpected(list_response.error());
  auto list = parse_json_answer(*list_response, "/workflow-list");
  if (!list) return tl::unexpected(list.error());
  const json::value* ids = list->as_object().if_contains("ids");
  if (ids == nullptr || !ids->is_array()) return fail("/workflow-list: no \"ids\" list");
  std::vector<UiWorkflow> workflows;
  for (const json::value& id : ids->as_array()) {
    if (id.is_string()) workflows.push_back(UiWorkflow{std::string(id.as_string()), false, {}, {}});
  }
  sort_by_id(workflows);
  return workflows;
}

// Each workflow's /workflow-slots, `parallelism` requests at a time; a failure is that
// workflow's error.
void read_each_workflow(HttpClient& client, const std::string& url, const std::string& range,
                        int parallelism, std::vector<UiWorkflow>& workflows) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < workflows.size(); i = next++) {
      UiWorkflow& wf = workflows[i];
      auto response = send(
          client, "GET", fmt::format("{}/workflow-slots?id={}&{}", url, url_encode(wf.id), range));
      if (!response) {
        wf.error = response.error().message;
        continue;
      }
      auto body = parse_json_answer(*response, "/workflow-slots");
      if (!body) {
        wf.error = body.error().message;
        continue;
      }
      fill_workflow(wf, body->as_object());
    }
  };
  const auto threads =
      std::min<std::size_t>(static_cast<std::size_t>(parallelism), workflows.size());
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

void describe_trigger(const json::value& node, int depth, std::string& out) {
  const json::object* obj = node.if_object();
  if (obj == nullptr) return;
  std::string description;
  if (const json::value* d = obj->if_contains("description"); d && d->is_string()) {
    description = std::string(d->as_string());
  } else if (const json::value* t = obj->if_contains("type"); t && t->is_string()) {
    description = std::string(t->as_string());
  }
  bool ready = false;
  if (const json::value* r = obj->if_contains("ready"); r && r->is_bool()) ready = r->as_bool();
  if (!out.empty()) out += '\n';
  out += fmt::format("{:{}}{} {}", "", depth * 2, ready ? "[ready]" : "[not ready]", description);
  if (const json::value* subs = obj->if_contains("subStatuses"); subs && subs->is_array()) {
    for (const json::value& sub : subs->as_array()) describe_trigger(sub, depth + 1, out);
  }
}

}  // namespace

CelosApiReader::CelosApiReader(std::shared_ptr<HttpClient> client, std::string celos_url,
                               int parallelism, Clock& clock)
    : client_(std::move(client)),
      celos_url_(std::move(celos_url)),
      parallelism_(std::max(1, parallelism)),
      clock_(clock) {
  while (!celos_url_.empty() && celos_url_.back() == '/') celos_url_.pop_back();
}

Result<std::vector<UiWorkflow>> CelosApiReader::read(Time start, Time end) {
  const std::string range =
      fmt::format("start={}&end={}", url_encode(format_time(start)), url_encode(format_time(end)));
  if (monotonic_ms(clock_) >= batch_retry_after_ms_.load()) {
    auto response = send(*client_, "GET", celos_url_ + "/multi-workflow-slots?" + range);
    if (!response) return tl::unexpected(response.error());
    if (response->status == 200) return batch_workflows(*response);
    batch_retry_after_ms_ = monotonic_ms(clock_) + std::chrono::milliseconds(kBatchRetry).count();
  }
  auto workflows = read_workflow_list(*client_, celos_url_);
  if (!workflows) return tl::unexpected(workflows.error());
  read_each_workflow(*client_, celos_url_, range, parallelism_, *workflows);
  return workflows;
}

Result<UiSlot> CelosApiReader::rerun(const std::string& workflow, Time time) {
  const std::string slot =
      fmt::format("id={}&time={}", url_encode(workflow), url_encode(format_time(time)));
  auto response = send(*client_, "POST", celos_url_ + "/rerun?" + slot);
  if (!response) return tl::unexpected(response.error());
  if (response->status != 200) {
    return fail(celos_error_text(*response), code_of_status(response->status));
  }
  // celos-server answers the new state; older servers may not, so then ask for it.
  boost::system::error_code ec;
  const json::value answer = json::parse(response->body, ec);
  if (!ec) {
    if (auto parsed = parse_slot(answer)) return parsed;
  }
  auto state = send(*client_, "GET", celos_url_ + "/slot-state?" + slot);
  if (!state) return tl::unexpected(state.error());
  if (state->status == 404) {  // nothing stored: a slot with no state is WAITING (SPEC §4)
    return UiSlot{time, SlotStatus::kWaiting, std::nullopt, 0, std::nullopt};
  }
  auto body = parse_json_answer(*state, "/slot-state");
  if (!body) return tl::unexpected(body.error());
  return parse_slot(*body);
}

Result<std::string> CelosApiReader::trigger_status(const std::string& workflow, Time time) {
  auto response = send(*client_, "GET",
                       fmt::format("{}/trigger-status?id={}&time={}", celos_url_,
                                   url_encode(workflow), url_encode(format_time(time))));
  if (!response) return tl::unexpected(response.error());
  auto body = parse_json_answer(*response, "/trigger-status");
  if (!body) return tl::unexpected(body.error());
  std::string out;
  describe_trigger(*body, 0, out);
  return out;
}

Result<std::string> CelosApiReader::get_json(const std::string& target) {
  auto response = send(*client_, "GET", celos_url_ + target);
  if (!response) return tl::unexpected(response.error());
  auto body = parse_json_answer(*response, target.substr(0, target.find('?')));
  if (!body) return tl::unexpected(body.error());
  return std::move(response->body);
}

Result<HttpResponse> CelosApiReader::call(const std::string& method, const std::string& target) {
  return send(*client_, method, celos_url_ + target);
}

}  // namespace celos
