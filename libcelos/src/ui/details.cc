// A slot's details and range reruns for celos-ui. Details are read only when someone clicks a
// slot (four small requests to celos-server), so the grid itself stays one batch read however
// many workflows it shows.
#include "ui/details.h"

#include <boost/json.hpp>
#include <fmt/format.h>

#include "ui/html.h"

namespace celos {

namespace json = boost::json;

namespace {

std::string slot_query(const SlotId& slot) {
  return fmt::format("id={}&time={}", url_encode(slot.workflow),
                     url_encode(format_time(slot.time)));
}

std::string text_of(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return "";
  if (v->is_string()) return std::string(v->get_string());
  return json::serialize(*v);
}

void row(std::string& out, std::string_view name, std::string_view cls, std::string_view value) {
  fmt::format_to(std::back_inserter(out), "<tr><th>{}</th><td class=\"{}\">", name, cls);
  out += html_escape(value);
  out += "</td></tr>";
}

// The slot's stored record; 404 "no state stored" is a slot that has not changed yet.
void render_state(std::string& out, CelosApiReader& reader, const SlotId& slot,
                  const std::string& hue_url) {
  out += "<table class=\"facts\">";
  auto response = reader.call("GET", "/slot-state?" + slot_query(slot));
  json::object o;
  if (response && response->status == 200) {
    boost::system::error_code ec;
    json::value v = json::parse(response->body, ec);
    if (!ec && v.is_object()) o = std::move(v.as_object());
  }
  if (o.empty()) {
    const bool unchanged = response && response->status == 404;
    row(out, "state", "state waiting", unchanged ? "WAITING" : "unknown");
    row(out, "note", "note",
        unchanged ? "nothing stored yet"
                  : (response ? celos_error_text(*response) : response.error().message));
    out += "</table>";
    return;
  }
  const std::string status = text_of(o, "status");
  row(out, "state", "state " + html_escape(status), status);
  const std::string external = text_of(o, "externalID");
  row(out, "external id", "external", external.empty() ? "none" : external);
  row(out, "retries", "retries", text_of(o, "retryCount"));
  if (const std::string message = text_of(o, "message"); !message.empty()) {
    row(out, "message", "message", message);
  }
  if (const std::string retry_at = text_of(o, "retryAt"); !retry_at.empty()) {
    row(out, "retry not before", "retry-at", retry_at + " (back-off)");
  }
  if (!hue_url.empty() && !external.empty()) {
    out += "<tr><th>Hue</th><td><a class=\"hue\" href=\"";
    out += html_escape(hue_url + "/list_oozie_workflow/" + url_encode(external));
    out += "\">open in Hue</a></td></tr>";
  }
  out += "</table>";
}

void render_history(std::string& out, const json::array& entries) {
  out += "<h3>History</h3>";
  if (entries.empty()) {
    out += "<p class=\"note history-empty\">No changes recorded.</p>";
    return;
  }
  out +=
      "<table class=\"history\"><tr><th>at</th><th>from</th><th>to</th><th>by</th>"
      "<th>external id</th><th>retries</th><th>message</th></tr>";
  for (const json::value& e : entries) {
    const json::object* o = e.if_object();
    if (o == nullptr) continue;
    out += "<tr>";
    for (std::string_view key : {"at", "from", "to", "by", "externalID", "retryCount", "message"}) {
      out += "<td>";
      out += html_escape(text_of(*o, key));
      out += "</td>";
    }
    out += "</tr>";
  }
  out += "</table>";
}

// Job output can be anything (binary, huge): celos-server bounds it with `tail`; control bytes
// other than newlines and tabs are shown as '.', and everything is escaped.
std::string printable(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\n' && c != '\t') c = '.';
    if (u == 0x7f) c = '.';
  }
  return html_escape(out);
}

void render_log(std::string& out, CelosApiReader& reader, const SlotId& slot,
                std::string_view stream) {
  fmt::format_to(std::back_inserter(out), "<h3>Output: {} (last {} bytes)</h3>", stream,
                 kDetailsLogTail);
  auto response = reader.call("GET", fmt::format("/api/v1/slot-log?{}&stream={}&tail={}",
                                                 slot_query(slot), stream, kDetailsLogTail));
  if (response && response->status == 200) {
    fmt::format_to(std::back_inserter(out), "<pre class=\"log {}\">", stream);
    out += printable(response->body);
    out += "</pre>";
    return;
  }
  out += "<p class=\"note log-none\">";
  out += html_escape(response ? celos_error_text(*response) : response.error().message);
  out += "</p>";
}

}  // namespace

HttpServerResponse ui_slot_details(CelosApiReader& reader, const SlotId& slot,
                                   const std::string& hue_url) {
  // History first: it also says whether the workflow and the slot exist.
  auto history = reader.call("GET", "/api/v1/slot-history?" + slot_query(slot));
  if (!history) {
    return html_response(
        502, "<p class=\"note error\">" + html_escape(history.error().message) + "</p>");
  }
  if (history->status == 404 || history->status == 400) {
    return html_response(history->status, "<p class=\"note error\">" +
                                              html_escape(celos_error_text(*history)) + "</p>");
  }
  const std::string id = slot.workflow + "@" + format_time(slot.time);
  std::string out = "<div class=\"slot-details\" data-id=\"" + html_escape(id) + "\"><h2>";
  out += html_escape(slot.workflow) + " <span class=\"time\">" + format_time(slot.time) + "</span>";
  out += "</h2>";
  render_state(out, reader, slot, hue_url);
  boost::system::error_code ec;
  const json::value entries = json::parse(history->body, ec);
  if (history->status == 200 && !ec && entries.is_array()) {
    render_history(out, entries.as_array());
  } else {
    out += "<h3>History</h3><p class=\"note\">" + html_escape(celos_error_text(*history)) + "</p>";
  }
  out += "<h3>Trigger</h3>";
  auto trigger = reader.trigger_status(slot.workflow, slot.time);
  out += trigger ? "<pre class=\"trigger\">" + html_escape(*trigger) + "</pre>"
                 : "<p class=\"note\">" + html_escape(trigger.error().message) + "</p>";
  render_log(out, reader, slot, "stdout");
  render_log(out, reader, slot, "stderr");
  out += "</div>\n";
  return html_response(200, std::move(out));
}

HttpServerResponse ui_range_rerun(CelosApiReader& reader, const std::string& workflow, Time start,
                                  Time end, const std::string* status, bool dry_run) {
  std::string target = fmt::format("/api/v1/rerun?id={}&start={}&end={}", url_encode(workflow),
                                   url_encode(format_time(start)), url_encode(format_time(end)));
  if (status != nullptr && !status->empty()) target += "&status=" + url_encode(*status);
  if (dry_run) target += "&dryRun=true";
  HttpServerResponse answer;
  answer.headers["Cache-Control"] = "no-store";
  auto response = reader.call("POST", target);
  if (!response) {
    answer.status = 502;
    answer.body = json::serialize(json::object{{"error", response.error().message}});
    return answer;
  }
  boost::system::error_code ec;
  const json::value body = json::parse(response->body, ec);
  if (response->status == 200 && !ec && body.is_object()) {
    answer.body = std::move(response->body);
    return answer;
  }
  answer.status = response->status == 200 ? 502 : response->status;
  answer.body = json::serialize(json::object{{"error", celos_error_text(*response)}});
  return answer;
}

}  // namespace celos
