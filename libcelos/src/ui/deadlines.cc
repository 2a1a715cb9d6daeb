// Deadlines in celos-ui (deadlines.h): read, marked on tiles, listed.
#include "ui/deadlines.h"

#include <map>

#include <boost/json.hpp>
#include <fmt/format.h>

namespace celos {
namespace {

namespace json = boost::json;

std::string text(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

Result<Time> time_of(const json::object& o, std::string_view key) {
  auto t = parse_time(text(o, key));
  if (!t) return fail(fmt::format("deadline \"{}\": {}", key, t.error().message));
  return *t;
}

}  // namespace

Result<std::vector<UiDeadline>> parse_ui_deadlines(std::string_view body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  const json::object* o = ec ? nullptr : v.if_object();
  const json::value* list = o ? o->if_contains("deadlines") : nullptr;
  if (!list || !list->is_array()) return fail("not a {\"deadlines\": [...]} answer");
  std::vector<UiDeadline> out;
  for (const json::value& item : list->get_array()) {
    const json::object* d = item.if_object();
    if (!d) return fail("a deadline is not an object");
    UiDeadline u;
    u.workflow = text(*d, "workflow");
    auto time = time_of(*d, "time");
    if (!time) return tl::unexpected(time.error());
    auto deadline = time_of(*d, "deadline");
    if (!deadline) return tl::unexpected(deadline.error());
    auto state = parse_deadline_state(text(*d, "state"));
    if (!state) return tl::unexpected(state.error());
    u.time = *time;
    u.deadline = *deadline;
    u.state = *state;
    u.reason = text(*d, "reason");
    out.push_back(std::move(u));
  }
  return out;
}

std::map<Time, DeadlineState> deadline_marks(const UiPage& page, std::string_view workflow) {
  std::map<Time, DeadlineState> marks;
  for (const UiDeadline& d : page.deadlines) {
    if (d.workflow == workflow) marks[d.time] = d.state;
  }
  return marks;
}

void render_deadline_list(std::string& out, const UiPage& page) {
  if (page.deadlines.empty()) return;
  out +=
      "<table id=\"deadlines\"><caption>Deadlines at risk and missed</caption>"
      "<tr><th>deadline</th><th>state</th><th>workflow</th><th>slot</th><th>why</th></tr>\n";
  for (const UiDeadline& d : page.deadlines) {
    const bool missed = d.state == DeadlineState::kMissed;
    fmt::format_to(std::back_inserter(out), "<tr class=\"{}\"><td>{}</td><td>{}</td><td>",
                   missed ? "dl-missed" : "dl-at-risk", format_time(d.deadline),
                   missed ? "missed" : "at risk");
    out += html_escape(d.workflow);
    fmt::format_to(std::back_inserter(out), "</td><td>{}</td><td>", format_time(d.time));
    out += html_escape(d.reason);
    out += "</td></tr>\n";
  }
  out += "</table>\n";
}

std::string_view ui_deadline_style() {
  return R"css(
#deadlines { border-collapse: collapse; margin-bottom: 6px; }
#deadlines caption { text-align: left; font-weight: bold; }
#deadlines td, #deadlines th { padding: 0 6px; text-align: left; }
#deadlines tr.dl-missed td:nth-child(2) { color: #c00; font-weight: bold; }
#deadlines tr.dl-at-risk td:nth-child(2) { color: #c60; font-weight: bold; }
#grid td.dl-missed { box-shadow: inset 0 -3px 0 #c00; }
#grid td.dl-at-risk { box-shadow: inset 0 -3px 0 #f90; }
)css";
}

}  // namespace celos
