// celos-ui's deadlines: the list from celos-server, the marks on tiles, the list above the grid.
#include "ui/deadlines.h"

#include <catch2/catch.hpp>

using namespace celos;

namespace {

const Time kNow = make_time(2026, 3, 2, 11, 30);

UiPage page_with_slots() {
  UiPage page;
  page.time = kNow;
  page.grid = make_tile_grid(kNow, std::chrono::minutes(60));
  page.workflows.push_back(
      UiWorkflow{"report",
                 false,
                 {UiSlot{make_time(2026, 3, 2, 9), SlotStatus::kRunning, {}, 0, std::nullopt},
                  UiSlot{make_time(2026, 3, 2, 10), SlotStatus::kWaiting, {}, 0, std::nullopt}},
                 std::nullopt});
  return page;
}

}  // namespace

TEST_CASE("celos-server's deadlines are read, and bad answers refused") {
  auto list = parse_ui_deadlines(
      R"({"deadlines": [{"workflow": "report", "time": "2026-03-02T09:00:00.000Z",
          "deadline": "2026-03-02T11:00:00.000Z", "state": "MISSED", "predictedFinish": null,
          "reason": "not SUCCESS at the deadline"}]})");
  REQUIRE(list);
  REQUIRE(list->size() == 1);
  CHECK(list->front().state == DeadlineState::kMissed);
  CHECK(list->front().time == make_time(2026, 3, 2, 9));
  CHECK_FALSE(parse_ui_deadlines("{}"));
  CHECK_FALSE(parse_ui_deadlines(R"({"deadlines": [{"workflow": "w", "time": "x"}]})"));
}

TEST_CASE("at-risk and missed slots get a mark on their tile and a row in the list") {
  UiPage page = page_with_slots();
  page.deadlines = {{"report", make_time(2026, 3, 2, 9), make_time(2026, 3, 2, 11),
                     DeadlineState::kMissed, "not SUCCESS at the deadline <late>"},
                    {"report", make_time(2026, 3, 2, 10), make_time(2026, 3, 2, 12),
                     DeadlineState::kAtRisk, "input late"}};
  const std::string html = render_ui_page(page);
  CHECK(html.find("class=\"slot running dl-missed\"") != std::string::npos);
  CHECK(html.find("class=\"slot waiting dl-at-risk\"") != std::string::npos);
  CHECK(html.find("Deadlines at risk and missed") != std::string::npos);
  CHECK(html.find("not SUCCESS at the deadline &lt;late&gt;") != std::string::npos);
  UiPage quiet = page_with_slots();
  const std::string plain = render_ui_page(quiet);
  CHECK(plain.find("<table id=\"deadlines\"") == std::string::npos);
  CHECK(plain.find("class=\"slot running\"") != std::string::npos);
}
