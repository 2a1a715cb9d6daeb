// The page's backfill bars (celos/ui.h, issue 29): each running or paused plan's progress over
// its slots, its range and its ETA, read from celos-server's GET /api/v1/backfills.
#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/ui.h"

namespace celos {
namespace {

namespace json = boost::json;

std::size_t count_at(const json::object& slots, std::string_view key) {
  const json::value* v = slots.if_contains(key);
  return v && v->is_int64() && v->as_int64() > 0 ? static_cast<std::size_t>(v->as_int64()) : 0;
}

std::string text_at(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

std::vector<UiBackfill> parse_ui_backfills(std::string_view text) {
  std::vector<UiBackfill> out;
  boost::system::error_code ec;
  const json::value v = json::parse(text, ec);
  const json::object* o = ec ? nullptr : v.if_object();
  const json::value* plans = o ? o->if_contains("backfills") : nullptr;
  if (plans == nullptr || !plans->is_array()) return out;
  for (const json::value& p : plans->as_array()) {
    const json::object* plan = p.if_object();
    const json::value* slots = plan ? plan->if_contains("slots") : nullptr;
    if (slots == nullptr || !slots->is_object()) continue;
    UiBackfill b;
    b.state = text_at(*plan, "state");
    if (b.state != "running" && b.state != "paused") continue;
    b.id = text_at(*plan, "id");
    b.start = text_at(*plan, "start");
    b.end = text_at(*plan, "end");
    const json::object& s = slots->as_object();
    b.total = count_at(s, "total");
    b.running = count_at(s, "RUNNING");
    for (const char* status : {"SUCCESS", "FAILURE", "WAIT_TIMEOUT", "KILLED"}) {
      b.ended += count_at(s, status);
    }
    if (std::string eta = text_at(*plan, "eta"); !eta.empty()) b.eta = std::move(eta);
    out.push_back(std::move(b));
  }
  return out;
}

std::string render_ui_backfills(const std::vector<UiBackfill>& backfills) {
  std::string out;
  for (const UiBackfill& b : backfills) {
    const std::size_t percent =
        b.total == 0 ? 100 : std::min<std::size_t>(100, b.ended * 100 / b.total);
    out += "<div class=\"backfill\" data-backfill=\"";
    out += html_escape(b.id);
    out += "\">Backfill ";
    out += html_escape(b.id);
    out += " (" + b.state + ")<span class=\"bar\" title=\"";
    out += html_escape(b.start + " to " + b.end);
    fmt::format_to(std::back_inserter(out),
                   "\"><span class=\"done\" style=\"width: {}%\"></span></span>{}/{} slots, {} "
                   "running",
                   percent, b.ended, b.total, b.running);
    if (b.eta) {
      out += ", ETA ";
      out += html_escape(*b.eta);
    }
    out += "</div>\n";
  }
  return out;
}

}  // namespace celos
