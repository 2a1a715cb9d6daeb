#include <catch2/catch.hpp>

#include "celos/ui.h"

using namespace celos;
using std::chrono::minutes;

namespace {

UiSlot slot(Time t, SlotStatus status, std::optional<std::string> external_id = std::nullopt) {
  return UiSlot{t, status, std::move(external_id), 0, std::nullopt};
}

UiPage page_at(Time time, minutes zoom = minutes(60)) {
  UiPage page;
  page.time = time;
  page.grid = make_tile_grid(time, zoom);
  return page;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
    ++n;
  return n;
}

}  // namespace

TEST_CASE("html_escape makes markup and quotes harmless") {
  CHECK(html_escape("<script>alert('x')</script> & \"q\"") ==
        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
  CHECK(html_escape("plain-id_1") == "plain-id_1");
}

TEST_CASE("a workflow id with markup renders as text, never as markup") {
  UiPage page = page_at(make_time(2015, 9, 15, 11, 30));
  page.workflows.push_back(UiWorkflow{"<script>alert(1)</script>",
                                      false,
                                      {slot(make_time(2015, 9, 15, 10), SlotStatus::kWaiting)},
                                      {}});
  page.config.groups.push_back(UiGroup{"<b>group</b>", {"<img src=x>"}});
  const std::string html = render_ui_page(page);
  CHECK(html.find("<script>alert(1)") == std::string::npos);
  CHECK(html.find("<b>group") == std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("&lt;b&gt;group&lt;/b&gt;") != std::string::npos);
}

TEST_CASE("a lone slot shows its state word and class, success shows no word") {
  UiPage page = page_at(make_time(2015, 9, 15, 11, 30));
  page.workflows.push_back(UiWorkflow{"wf",
                                      false,
                                      {slot(make_time(2015, 9, 15, 11), SlotStatus::kWaiting),
                                       slot(make_time(2015, 9, 15, 10), SlotStatus::kFailure),
                                       slot(make_time(2015, 9, 15, 9), SlotStatus::kSuccess),
                                       slot(make_time(2015, 9, 15, 8), SlotStatus::kWaitTimeout)},
                                      {}});
  const std::string html = render_ui_page(page);
  CHECK(html.find("class=\"slot waiting\" data-t=\"2015-09-15T11:00:00.000Z\"") !=
        std::string::npos);
  CHECK(html.find("<td class=\"slot failure\" data-t=\"2015-09-15T10:00:00.000Z\">fail</td>") !=
        std::string::npos);
  CHECK(html.find("<td class=\"slot success\" data-t=\"2015-09-15T09:00:00.000Z\"></td>") !=
        std::string::npos);
  CHECK(html.find(">time</td>") != std::string::npos);
  // 48 tiles in the row: 4 with a slot, 44 empty.
  CHECK(count_of(html, "<td></td>") == 44);
}

TEST_CASE("several slots in a tile show their count coloured by the worst state") {
  UiPage page = page_at(make_time(2015, 9, 15, 11, 30), minutes(1440));
  std::vector<UiSlot> slots;
  for (int h = 0; h < 12; ++h)
    slots.push_back(slot(make_time(2015, 9, 15, h), SlotStatus::kSuccess));
  slots[3].status = SlotStatus::kRunning;
  slots[5].status = SlotStatus::kKilled;
  for (int h = 0; h < 24; ++h)
    slots.push_back(slot(make_time(2015, 9, 14, h), SlotStatus::kSuccess));
  page.workflows.push_back(UiWorkflow{"wf", false, slots, {}});
  const std::string html = render_ui_page(page);
  // data-tile: the tile's start, for selecting its slots as a rerun range.
  CHECK(html.find("<td class=\"slot multi killed\" data-tile=\"2015-09-15T00:00:00.000Z\" "
                  "title=\"12 slots, worst KILLED\">12</td>") != std::string::npos);
  CHECK(html.find("<td class=\"slot multi success\" data-tile=\"2015-09-14T00:00:00.000Z\" "
                  "title=\"24 slots, worst SUCCESS\">24</td>") != std::string::npos);
}

TEST_CASE("the header has a day row with the day of month on midnight tiles and HHmm labels") {
  const std::string html = render_ui_page(page_at(make_time(2015, 9, 2, 0, 0)));
  CHECK(html.find("<th class=\"now\">2015-09-02 00:00 UTC</th>") != std::string::npos);
  CHECK(html.find("<th class=\"day\"><span>02</span></th>") != std::string::npos);
  CHECK(html.find("<th class=\"day\"><span>01</span></th>") != std::string::npos);
  CHECK(count_of(html, "<th class=\"day\">") == 2);
  CHECK(count_of(html, "<th class=\"tile\"") == 48);
  CHECK(html.find(">2300</th>") != std::string::npos);
}

TEST_CASE("groups come from the config, unknown ones are missing and the rest are unlisted") {
  UiPage page = page_at(make_time(2015, 9, 15, 11, 30));
  page.config.groups.push_back(UiGroup{"Flume", {"flume-b", "ghost"}});
  page.workflows.push_back(UiWorkflow{"flume-b", false, {}, {}});
  page.workflows.push_back(UiWorkflow{"other", true, {}, {}});
  const std::string html = render_ui_page(page);
  const auto flume = html.find(">Flume</th>");
  const auto b = html.find("data-wf=\"flume-b\"");
  const auto ghost = html.find("<tr class=\"workflow missing\" data-wf=\"ghost\">");
  const auto unlisted = html.find(">Unlisted workflows</th>");
  const auto other = html.find("<tr class=\"workflow paused\" data-wf=\"other\">");
  REQUIRE(flume != std::string::npos);
  REQUIRE(ghost != std::string::npos);
  REQUIRE(other != std::string::npos);
  CHECK(flume < b);
  CHECK(b < ghost);
  CHECK(ghost < unlisted);
  CHECK(unlisted < other);
  CHECK(html.find(">missing</span>") != std::string::npos);
  CHECK(html.find(">paused</span>") != std::string::npos);
}

TEST_CASE("with a Hue URL slots with an external id link to Hue") {
  UiPage page = page_at(make_time(2015, 9, 15, 11, 30));
  page.hue_url = "http://hue:8888/oozie";
  page.workflows.push_back(
      UiWorkflow{"wf",
                 false,
                 {slot(make_time(2015, 9, 15, 11), SlotStatus::kRunning, "0001-oozie-W"),
                  slot(make_time(2015, 9, 15, 10), SlotStatus::kWaiting)},
                 {}});
  const std::string html = render_ui_page(page);
  CHECK(html.find("<a href=\"http://hue:8888/oozie/list_oozie_workflow/0001-oozie-W\">run</a>") !=
        std::string::npos);
  CHECK(count_of(html, "list_oozie_workflow") == 1);
  CHECK(html.find("data-x=\"0001-oozie-W\"") != std::string::npos);
}

TEST_CASE("navigation links move by a page and zoom along a ladder") {
  const std::string html = render_ui_page(page_at(make_time(2015, 9, 15, 12, 0)));
  CHECK(html.find("id=\"nav-earlier\" href=\"ui?time=2015-09-13T12%3A00%3A00.000Z&amp;zoom=60\"") !=
        std::string::npos);
  CHECK(html.find("id=\"nav-later\" href=\"ui?time=2015-09-17T12%3A00%3A00.000Z&amp;zoom=60\"") !=
        std::string::npos);
  CHECK(html.find("id=\"nav-zoom-in\" href=\"ui?time=2015-09-15T12%3A00%3A00.000Z&amp;zoom=30\"") !=
        std::string::npos);
  CHECK(
      html.find("id=\"nav-zoom-out\" href=\"ui?time=2015-09-15T12%3A00%3A00.000Z&amp;zoom=120\"") !=
      std::string::npos);
}

TEST_CASE("a workflow whose slots could not be read says so in its row only") {
  UiPage page = page_at(make_time(2015, 9, 15, 11, 30));
  page.workflows.push_back(UiWorkflow{"bad", false, {}, std::string("corrupt <file>")});
  page.workflows.push_back(
      UiWorkflow{"good", false, {slot(make_time(2015, 9, 15, 11), SlotStatus::kReady)}, {}});
  const std::string html = render_ui_page(page);
  CHECK(html.find("<td class=\"note\" colspan=\"48\">corrupt &lt;file&gt;</td>") !=
        std::string::npos);
  CHECK(html.find(">rdy</td>") != std::string::npos);
}

TEST_CASE("the UI config is read from JSON and wrong shapes are explained") {
  auto config = parse_ui_config(
      R"({"groups":[{"name":"A","workflows":["x","y"]},{"name":"B","workflows":[]}]})");
  REQUIRE(config);
  REQUIRE(config->groups.size() == 2);
  CHECK(config->groups[0].workflows == std::vector<std::string>{"x", "y"});
  CHECK(parse_ui_config("{}")->groups.empty());
  CHECK_FALSE(parse_ui_config("not json"));
  CHECK_FALSE(parse_ui_config(R"({"groups":{}})"));
  auto bad = parse_ui_config(R"({"groups":[{"name":"A","workflows":[1]}]})");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("'A'") != std::string::npos);
}

TEST_CASE("the error page is readable and escapes its message") {
  const std::string html = render_error_page(502, "celos-server is unavailable", "refused <x>");
  CHECK(html.find("<h1>celos-server is unavailable</h1>") != std::string::npos);
  CHECK(html.find("refused &lt;x&gt;") != std::string::npos);
}

TEST_CASE("a running backfill shows a progress bar with its ETA, and its slots' tiles are marked") {
  UiPage page = page_at(make_time(2015, 9, 15, 11, 30));
  UiSlot filled = slot(make_time(2015, 9, 15, 10), SlotStatus::kRunning, "job-1");
  filled.backfill = "bf-1";
  page.workflows.push_back(
      UiWorkflow{"wf", false, {filled, slot(make_time(2015, 9, 15, 11), SlotStatus::kReady)}, {}});
  page.backfills = parse_ui_backfills(
      R"({"backfills":[{"id":"bf-1","state":"running","start":"2015-03-01T00:00:00.000Z",)"
      R"("end":"2015-04-01T00:00:00.000Z","slots":{"total":40,"SUCCESS":9,"FAILURE":1,)"
      R"("RUNNING":2,"PENDING":28},"eta":"2015-09-15T20:00:00.000Z"},)"
      R"({"id":"bf-0","state":"done","slots":{"total":3,"SUCCESS":3}}]})");
  REQUIRE(page.backfills.size() == 1);  // a done plan has no bar
  const std::string html = render_ui_page(page);
  CHECK(html.find("<div class=\"backfill\" data-backfill=\"bf-1\">Backfill bf-1 (running)") !=
        std::string::npos);
  CHECK(html.find("style=\"width: 25%\"") != std::string::npos);
  CHECK(html.find("10/40 slots, 2 running, ETA 2015-09-15T20:00:00.000Z") != std::string::npos);
  CHECK(count_of(html, "class=\"slot running backfill\" data-t=") == 1);
  CHECK(count_of(html, "data-backfill=\"bf-1\"") == 2);
  CHECK(parse_ui_backfills("not json").empty());
}

TEST_CASE("with tz= the header shows local hours and days and marks the day the clocks move") {
  // 2026-03-29: Paris goes from +01:00 to +02:00 at 01:00Z.
  UiPage page = page_at(make_time(2026, 3, 29, 6, 30));
  page.zone = *TimeZone::load("Europe/Paris");
  page.zone_given = true;
  const std::string html = render_ui_page(page);
  CHECK(html.find("2026-03-29 08:30 Europe/Paris (+02:00)") != std::string::npos);
  CHECK(html.find("title=\"2026-03-29T05:00:00.000Z\">0700</th>") != std::string::npos);
  CHECK(html.find("title=\"2026-03-29T00:00:00.000Z\">0100</th>") != std::string::npos);
  CHECK(html.find("title=\"2026-03-28T23:00:00.000Z\">0000</th>") != std::string::npos);
  CHECK(html.find("<span>29</span><span class=\"dst\" "
                  "title=\"2026-03-29T01:00:00.000Z: +01:00 -> +02:00\">DST</span>") !=
        std::string::npos);
  CHECK(count_of(html, "class=\"dst\"") == 1);
  CHECK(html.find("tz=Europe%2FParis") != std::string::npos);
  // Without tz: UTC labels, no DST mark, as before.
  const std::string utc = render_ui_page(page_at(make_time(2026, 3, 29, 6, 30)));
  CHECK(utc.find("2026-03-29 06:30 UTC") != std::string::npos);
  CHECK(utc.find("class=\"dst\"") == std::string::npos);
}
