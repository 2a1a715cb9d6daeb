// HTML of the UI grid. One pass over the data into one preallocated string: with 500 workflows
// × 48 tiles the page is ~1-2 MB and must render in a few milliseconds.
#include <algorithm>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "celos/ui.h"
#include "ui/deadlines.h"
#include "ui/details.h"

namespace celos {

namespace {

constexpr std::string_view kStyle = R"css(
body { font-family: sans-serif; font-size: 11px; margin: 6px; }
#nav { margin-bottom: 6px; } #nav a { margin-right: 1em; }
#notice { background: #fdd; border: 1px solid #c66; padding: 4px; margin-bottom: 6px; }
#maintenance { background: #ffd; border: 1px solid #cc6; padding: 4px; margin-bottom: 6px; }
table#grid { border-collapse: separate; border-spacing: 1px; }
#grid th, #grid td { padding: 0 2px; white-space: nowrap; font-weight: normal; }
#grid th.name, #grid th.group, #grid th.now { text-align: right; padding-right: 6px; }
#grid th.group { font-weight: bold; padding-top: 10px; }
#grid th.now { font-family: monospace; font-weight: bold; }
#grid th.tile { font-family: monospace; }
#grid th.day span { background: #000; color: #fff; font-weight: bold; padding: 0 4px; }
#grid th.day span.dst { background: #c60; }
#grid td { font-family: monospace; min-width: 3.2em; height: 1.3em; user-select: none; }
#grid td a { display: block; color: inherit; text-decoration: none; min-height: 1.3em; }
#grid td.success { background: #cfc; }
#grid td.waiting { background: #ccf; }
#grid td.ready { background: #ffc; }
#grid td.running { background: #ffc; color: #00c; }
#grid td.failure { background: #f66; color: #fff; font-weight: bold; }
#grid td.wait_timeout { background: #fb6; }
#grid td.killed { background: #bbb; }
#grid td.note { color: #a00; font-family: sans-serif; }
#grid tr.paused th.name { color: #888; font-style: italic; }
#grid tr.paused td.slot { opacity: 0.45; }
#grid .mark { color: #fff; background: #888; border-radius: 2px; padding: 0 3px; margin-left: 4px; font-style: normal; }
#grid tr.missing .mark { background: #c33; }
p.help { color: #666; }
#grid td.lineage-selected { outline: 2px solid #000; }
#grid td.upstream { outline: 2px dashed #06c; }
#grid td.downstream { outline: 2px dashed #c60; }
#grid td.backfill { background-image: repeating-linear-gradient(135deg, transparent 0 4px, rgba(0,0,0,0.12) 4px 6px); }
div.backfill { margin-bottom: 4px; } div.backfill .bar { display: inline-block; width: 20em; height: 0.9em; border: 1px solid #888; vertical-align: middle; margin: 0 6px; }
div.backfill .done { display: block; height: 100%; background: #6c6; }
)css";

// Navigation ladder for zoom in/out (minutes).
constexpr int kZoomLadder[] = {1, 5, 15, 30, 60, 120, 180, 360, 720, 1440};

// Shift-click rerun and lazy "why is it waiting" tooltips; plain DOM, no framework.
constexpr std::string_view kScript = R"js(
(function () {
  var grid = document.getElementById('grid');
  function slotOf(td) { return td.parentNode.getAttribute('data-wf') + '@' + td.getAttribute('data-t'); }
  grid.addEventListener('click', function (e) {
    if (!e.shiftKey) return;
    var td = e.target.closest('td[data-t]');
    if (!td) return;
    e.preventDefault();
    var id = slotOf(td);
    if (!window.confirm('Rerun ' + id + '?')) return;
    td.setAttribute('data-rerun', 'pending');
    fetch('rerun?id=' + encodeURIComponent(id), {method: 'POST'}).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) { td.setAttribute('data-rerun', 'failed'); alert('Rerun of ' + id + ' failed: ' + (j.error || r.status)); return; }
        td.className = 'slot ' + j['class'];
        td.textContent = j.word;
        td.removeAttribute('data-x');
        td.removeAttribute('data-r');
        td.removeAttribute('data-tip');
        td.removeAttribute('title');
        td.setAttribute('data-rerun', 'done');
      });
    }).catch(function (err) { td.setAttribute('data-rerun', 'failed'); alert('Rerun of ' + id + ' failed: ' + err); });
  });
  // Alt-click: highlight the slots that produced this slot's inputs (upstream, blue) and that
  // read its outputs (downstream, orange), from celos-ui's /lineage.
  grid.addEventListener('click', function (e) {
    if (!e.altKey) return;
    var td = e.target.closest('td[data-t]');
    if (!td) return;
    e.preventDefault();
    Array.prototype.forEach.call(grid.querySelectorAll('.lineage-selected, .upstream, .downstream'),
      function (c) { c.classList.remove('lineage-selected', 'upstream', 'downstream'); });
    td.classList.add('lineage-selected');
    fetch('lineage?id=' + encodeURIComponent(slotOf(td))).then(function (r) { return r.json(); })
      .then(function (j) {
        function mark(list, cls) {
          (list || []).forEach(function (id) {
            var at = id.lastIndexOf('@'), wf = id.substring(0, at), t = id.substring(at + 1);
            Array.prototype.forEach.call(grid.querySelectorAll('tr[data-wf]'), function (tr) {
              if (tr.getAttribute('data-wf') !== wf) return;
              var cell = tr.querySelector('td[data-t="' + t + '"]');
              if (cell) cell.classList.add(cls);
            });
          });
        }
        mark(j.upstream, 'upstream');
        mark(j.downstream, 'downstream');
        td.setAttribute('data-lineage', 'loaded');
      });
  });
  // Tooltips are built on first hover; a waiting slot also says what it waits for.
  grid.addEventListener('mouseover', function (e) {
    var td = e.target.closest('td[data-t]');
    if (!td || td.getAttribute('data-tip')) return;
    td.setAttribute('data-tip', '1');
    var status = td.className.split(' ')[1].toUpperCase(), tip = slotOf(td) + ': ' + status;
    if (td.getAttribute('data-r')) tip += ', retry ' + td.getAttribute('data-r');
    if (td.getAttribute('data-x')) tip += ', external id ' + td.getAttribute('data-x');
    td.title = tip;
    if (status !== 'WAITING') return;
    fetch('trigger-status?id=' + encodeURIComponent(slotOf(td))).then(function (r) { return r.text(); })
      .then(function (t) { td.title = tip + '\n' + t; td.setAttribute('data-why', 'loaded'); });
  });
})();
)js";

std::string corner_time(Time t, const TimeZone& zone) {
  if (zone.is_utc() && zone.name() == "UTC") {
    const CivilTime c = to_civil(t);
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02} UTC", c.year, c.month, c.day, c.hour,
                       c.minute);
  }
  const ZonedTime z = zone.at(t);
  const CivilTime& c = z.local;
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02} {} ({})", c.year, c.month, c.day, c.hour,
                     c.minute, html_escape(zone.name()), format_offset(z.offset));
}

// `&amp;filter=…&amp;refresh=…` of the page, kept by every navigation link.
std::string view_suffix(const UiPage& page) {
  std::string out;
  if (!page.filter.empty()) out += "&amp;filter=" + url_encode(page.filter);
  if (page.refresh_seconds > 0) out += fmt::format("&amp;refresh={}", page.refresh_seconds);
  if (page.zone_given) out += "&amp;tz=" + url_encode(page.zone.name());
  return out;
}

std::string ui_link(const UiPage& page, Time time, int zoom) {
  return fmt::format("ui?time={}&amp;zoom={}{}", url_encode(format_time(time)), zoom,
                     view_suffix(page));
}

void append_escaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
}

void render_nav(std::string& out, const UiPage& page) {
  const int zoom = static_cast<int>(page.grid.zoom.count());
  const auto span = page.grid.zoom * static_cast<int>(page.grid.starts.size());
  int zoom_in = kZoomLadder[0];
  int zoom_out = kZoomLadder[std::size(kZoomLadder) - 1];
  for (int z : kZoomLadder) {
    if (z < zoom) zoom_in = z;
  }
  for (auto it = std::rbegin(kZoomLadder); it != std::rend(kZoomLadder); ++it) {
    if (*it > zoom) zoom_out = *it;
  }
  fmt::format_to(std::back_inserter(out),
                 "<div id=\"nav\"><a id=\"nav-earlier\" href=\"{}\">&laquo; earlier</a>"
                 "<a id=\"nav-now\" href=\"ui?zoom={}{}\">now</a>"
                 "<a id=\"nav-later\" href=\"{}\">later &raquo;</a>"
                 "<a id=\"nav-zoom-in\" href=\"{}\">zoom in</a>"
                 "<a id=\"nav-zoom-out\" href=\"{}\">zoom out</a>"
                 "<span>{} minutes per tile</span></div>\n",
                 ui_link(page, page.time - span, zoom), zoom, view_suffix(page),
                 ui_link(page, page.time + span, zoom), ui_link(page, page.time, zoom_in),
                 ui_link(page, page.time, zoom_out), zoom);
}

// The filter box (a GET form, so the filtered page has its own URL), the range bar (hidden until
// a slot is clicked) and the details panel (filled on click from /slot).
void render_operator_bar(std::string& out, const UiPage& page) {
  out +=
      "<form id=\"filter\" method=\"get\" action=\"ui\">Workflows containing "
      "<input id=\"filter-input\" name=\"filter\" value=\"";
  append_escaped(out, page.filter);
  fmt::format_to(std::back_inserter(out), "\"><input type=\"hidden\" name=\"zoom\" value=\"{}\">",
                 page.grid.zoom.count());
  if (page.fixed_time) {
    fmt::format_to(std::back_inserter(out), "<input type=\"hidden\" name=\"time\" value=\"{}\">",
                   format_time(page.time));
  }
  if (page.refresh_seconds > 0) {
    fmt::format_to(std::back_inserter(out), "<input type=\"hidden\" name=\"refresh\" value=\"{}\">",
                   page.refresh_seconds);
  }
  out += "<button type=\"submit\">filter</button>";
  if (page.refresh_seconds > 0) {
    fmt::format_to(std::back_inserter(out),
                   " <span id=\"refresh-note\">refreshing every {} s (not while details or a "
                   "range are open)</span>",
                   page.refresh_seconds);
  }
  out +=
      "</form>\n<div id=\"range\" hidden>Rerun <b id=\"range-wf\"></b> from "
      "<input id=\"range-start\"> to <input id=\"range-end\"> (end excluded), only "
      "statuses <input id=\"range-status\" placeholder=\"e.g. FAILURE,KILLED\"> "
      "<button id=\"range-preview\" type=\"button\">Preview rerun</button> "
      "<button id=\"range-clear\" type=\"button\">Clear</button>"
      "<div id=\"range-result\"></div></div>\n<div id=\"details\" hidden></div>\n";
}

// The day cell of tile i in a zone: the local day, marked (class dst, a title saying how the
// clocks move) when the zone changes its offset that day.
std::string zoned_day(const TimeZone& zone, const std::vector<Time>& starts, std::size_t i) {
  const auto older = i + 1 < starts.size() ? std::optional<Time>(starts[i + 1]) : std::nullopt;
  std::string day = day_label(starts[i], older, zone);
  if (day.empty()) return day;
  const auto t = transition_in_day(starts[i], zone);
  if (!t) return day;
  return fmt::format("{}</span><span class=\"dst\" title=\"{}: {} -> {}\">DST", day,
                     format_time(t->at), format_offset(t->before), format_offset(t->after));
}

void render_header(std::string& out, const UiPage& page) {
  out += "<thead><tr class=\"days\"><th></th>";
  const auto& starts = page.grid.starts;  // newest first
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::string day =
        page.zone_given ? zoned_day(page.zone, starts, i) : day_label(starts[i]);
    if (day.empty()) {
      out += "<th></th>";
    } else {
      fmt::format_to(std::back_inserter(out), "<th class=\"day\"><span>{}</span></th>", day);
    }
  }
  fmt::format_to(std::back_inserter(out), "</tr>\n<tr class=\"tiles\"><th class=\"now\">{}</th>",
                 corner_time(page.time, page.zone));
  for (Time start : starts) {
    fmt::format_to(std::back_inserter(out), "<th class=\"tile\" title=\"{}\">{}</th>",
                   format_time(start),
                   page.zone_given ? tile_label(start, page.zone) : tile_label(start));
  }
  out += "</tr></thead>\n";
}

struct TileAcc {
  const UiSlot* first = nullptr;
  int count = 0;
  SlotStatus worst = SlotStatus::kSuccess;
  std::optional<DeadlineState> deadline;  // MISSED over AT_RISK
};

// The mark of a tile whose slot's deadline is at risk or missed (ui/deadlines.cc's style).
std::string_view deadline_class(std::optional<DeadlineState> state) {
  if (state == DeadlineState::kMissed) return " dl-missed";
  if (state == DeadlineState::kAtRisk) return " dl-at-risk";
  return "";
}

// Compact on purpose (500 rows × 48 tiles): the tooltip text is built by the script on hover
// from these attributes instead of being repeated in every cell.
void render_single(std::string& out, const UiSlot& slot, const std::string& hue_url,
                   std::optional<DeadlineState> mark) {
  fmt::format_to(std::back_inserter(out), "<td class=\"slot {}{}{}\" data-t=\"{}\"",
                 state_class(slot.status), slot.backfill ? " backfill" : "", deadline_class(mark),
                 format_time(slot.time));
  if (slot.backfill) {
    out += " data-backfill=\"";
    append_escaped(out, *slot.backfill);
    out += '"';
  }
  if (slot.retry_count > 0)
    fmt::format_to(std::back_inserter(out), " data-r=\"{}\"", slot.retry_count);
  if (slot.external_id) {
    out += " data-x=\"";
    append_escaped(out, *slot.external_id);
    out += '"';
  }
  out += '>';
  const std::string_view word = state_word(slot.status);
  if (!hue_url.empty() && slot.external_id) {
    out += "<a href=\"";
    append_escaped(out, hue_url + "/list_oozie_workflow/" + url_encode(*slot.external_id));
    out += "\">";
    out += word.empty() ? std::string_view("&nbsp;") : word;
    out += "</a>";
  } else {
    out += word;
  }
  out += "</td>";
}

void render_tiles(std::string& out, const UiWorkflow& wf, const UiPage& page,
                  std::vector<TileAcc>& tiles) {
  tiles.assign(page.grid.starts.size(), TileAcc{});
  const std::map<Time, DeadlineState> marks = deadline_marks(page, wf.id);
  auto mark_of = [&](const UiSlot& slot) -> std::optional<DeadlineState> {
    auto it = marks.find(slot.time);
    if (it == marks.end()) return std::nullopt;
    return it->second;
  };
  for (const UiSlot& slot : wf.slots) {
    const auto index = page.grid.tile_of(slot.time);
    if (!index) continue;
    TileAcc& tile = tiles[*index];
    if (tile.count == 0 || state_severity(slot.status) > state_severity(tile.worst)) {
      tile.worst = slot.status;
    }
    if (tile.count == 0) tile.first = &slot;
    if (auto mark = mark_of(slot); mark && (!tile.deadline || *mark == DeadlineState::kMissed)) {
      tile.deadline = mark;
    }
    ++tile.count;
  }
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    const TileAcc& tile = tiles[i];
    if (tile.count == 0) {
      out += "<td></td>";
    } else if (tile.count == 1) {
      render_single(out, *tile.first, page.hue_url, tile.deadline);
    } else {  // data-tile: a click selects the tile's slots as a rerun range
      fmt::format_to(
          std::back_inserter(out),
          "<td class=\"slot multi {}{}\" data-tile=\"{}\" title=\"{} slots, worst {}\">{}</td>",
          state_class(tile.worst), deadline_class(tile.deadline), format_time(page.grid.starts[i]),
          tile.count, ui_status_name(tile.worst), tile.count);
    }
  }
}

void render_row(std::string& out, const UiWorkflow* wf, std::string_view id, const UiPage& page,
                std::vector<TileAcc>& tiles) {
  const std::string classes =
      wf == nullptr ? "workflow missing" : (wf->paused ? "workflow paused" : "workflow");
  fmt::format_to(std::back_inserter(out), "<tr class=\"{}\" data-wf=\"", classes);
  append_escaped(out, id);
  out += "\"><th class=\"name\">";
  append_escaped(out, id);
  const auto columns = page.grid.starts.size();
  if (wf == nullptr) {
    fmt::format_to(std::back_inserter(out),
                   "<span class=\"mark\">missing</span></th><td class=\"note\" colspan=\"{}\">"
                   "not known to celos-server</td></tr>\n",
                   columns);
    return;
  }
  if (wf->paused)
    out += "<span class=\"mark\" title=\"paused: the scheduler skips it\">paused</span>";
  out += "</th>";
  if (wf->error) {
    fmt::format_to(std::back_inserter(out), "<td class=\"note\" colspan=\"{}\">", columns);
    append_escaped(out, *wf->error);
    out += "</td>";
  } else {
    render_tiles(out, *wf, page, tiles);
  }
  out += "</tr>\n";
}

void render_group_heading(std::string& out, std::string_view name, std::size_t columns) {
  out += "<tr class=\"group\"><th class=\"group\">";
  append_escaped(out, name);
  fmt::format_to(std::back_inserter(out), "</th><td colspan=\"{}\"></td></tr>\n", columns);
}

// The grid's rows: the config's groups in order, then the workflows no group lists.
void render_rows(std::string& out, const UiPage& page) {
  std::map<std::string_view, const UiWorkflow*> by_id;
  for (const UiWorkflow& wf : page.workflows) by_id.emplace(wf.id, &wf);
  std::map<std::string_view, bool> listed;
  std::vector<TileAcc> tiles;
  const auto columns = page.grid.starts.size();
  for (const UiGroup& group : page.config.groups) {
    render_group_heading(out, group.name, columns);
    for (const std::string& id : group.workflows) {
      const auto it = by_id.find(id);
      render_row(out, it == by_id.end() ? nullptr : it->second, id, page, tiles);
      listed[id] = true;
    }
  }
  bool heading = false;
  for (const UiWorkflow& wf : page.workflows) {
    if (listed.count(wf.id) != 0) continue;
    if (!heading) render_group_heading(out, "Unlisted workflows", columns);
    heading = true;
    render_row(out, &wf, wf.id, page, tiles);
  }
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_escaped(out, text);
  return out;
}

std::string render_ui_page(const UiPage& page) {
  std::string out;
  out.reserve(4096 + page.workflows.size() * page.grid.starts.size() * 48);
  out += "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Celos ";
  out += corner_time(page.time, page.zone);
  out += "</title><style>";
  out += kStyle;
  out += ui_details_style();
  out += ui_deadline_style();
  out += "</style></head>\n<body>\n";
  render_nav(out, page);
  render_operator_bar(out, page);
  if (!page.maintenance.empty()) {
    out += "<div id=\"maintenance\">Maintenance mode ";
    append_escaped(out, page.maintenance);
    out += "</div>\n";
  }
  out += render_ui_backfills(page.backfills);
  if (!page.notice.empty()) {
    out += "<div id=\"notice\">";
    append_escaped(out, page.notice);
    out += "</div>\n";
  }
  render_deadline_list(out, page);
  fmt::format_to(std::back_inserter(out),
                 "<table id=\"grid\" data-time=\"{}\" data-zoom=\"{}\" data-refresh=\"{}\">\n",
                 format_time(page.time), page.grid.zoom.count(), page.refresh_seconds);
  render_header(out, page);
  out += "<tbody>\n";

  render_rows(out, page);
  out +=
      "</tbody></table>\n<p class=\"help\">(Click a slot for its details and to rerun a "
      "range starting there; Ctrl-click another slot of the same workflow to widen the range. "
      "Shift-click a slot to rerun it. Hover a waiting slot to see what it waits for. "
      "Alt-click a slot to highlight the slots it read from and that read its output; "
      "<a href=\"datasets\">datasets</a>.)</p>\n<script>";
  out += kScript;
  out += ui_details_script();
  out += "</script>\n</body></html>\n";
  return out;
}

std::string render_error_page(int status, std::string_view title, std::string_view message) {
  std::string out = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>";
  append_escaped(out, title);
  out += "</title></head>\n<body style=\"font-family: sans-serif\"><h1>";
  append_escaped(out, title);
  out += "</h1>\n<p id=\"error\">";
  append_escaped(out, message);
  fmt::format_to(std::back_inserter(out),
                 "</p>\n<p>(HTTP {}. <a href=\"ui\">Try again</a>; the page recovers by itself "
                 "once the problem is gone.)</p>\n</body></html>\n",
                 status);
  return out;
}

}  // namespace celos
