// Slot history in the file state database: append-only JSON lines per workflow and slot day.
#include <catch2/catch.hpp>

#include "celos/file_system.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"
#include "testing/fakes.h"
#include "testing/temp_dir.h"

using namespace celos;
using std::chrono::hours;

namespace {

const Time kHistoryT = make_time(2015, 9, 15, 1);

SlotHistoryEntry change(Time slot, Time at, std::optional<SlotStatus> from, SlotStatus to,
                        std::string by = "step") {
  return SlotHistoryEntry{at, from, SlotState::of({"wf", slot}, to), std::move(by)};
}

}  // namespace

TEST_CASE("slot history is appended and read back per slot, oldest first") {
  testing::TempDir dir;
  auto db = make_file_state_database(make_local_file_system(), dir.path());
  REQUIRE(db->slot_history({"wf", kHistoryT}).value().empty());
  REQUIRE(db->append_history(
      {change(kHistoryT, kHistoryT + hours(1), std::nullopt, SlotStatus::kReady),
       change(kHistoryT + hours(1), kHistoryT + hours(2), std::nullopt, SlotStatus::kReady)}));
  auto running = change(kHistoryT, kHistoryT + hours(2), SlotStatus::kReady, SlotStatus::kRunning,
                        "api:jenkins@127.0.0.1");
  running.to.external_id = "job-1";
  running.to.message = "why";
  REQUIRE(db->append_history({running}));
  auto history = db->slot_history({"wf", kHistoryT});
  REQUIRE(history);
  REQUIRE(history->size() == 2);
  CHECK((*history)[0] == change(kHistoryT, kHistoryT + hours(1), std::nullopt, SlotStatus::kReady));
  CHECK((*history)[1] == running);
  CHECK(db->slot_history({"wf", kHistoryT + hours(1)}).value().size() == 1);
  // One file per workflow and slot day, not one per change.
  CHECK(testing::read_text_file(dir / "history/wf/2015-09-15.jsonl").find("job-1") !=
        std::string::npos);
}

TEST_CASE("a torn last line of a history file is skipped and later appends are still read") {
  testing::TempDir dir;
  auto db = make_file_state_database(make_local_file_system(), dir.path());
  REQUIRE(db->append_history({change(kHistoryT, kHistoryT, std::nullopt, SlotStatus::kReady)}));
  {
    const std::string path = dir / "history/wf/2015-09-15.jsonl";
    testing::write_text_file(path, testing::read_text_file(path) + R"({"time":"2015-09-15T01:0)");
  }
  REQUIRE(db->append_history(
      {change(kHistoryT, kHistoryT + hours(1), SlotStatus::kReady, SlotStatus::kRunning)}));
  auto history = db->slot_history({"wf", kHistoryT});
  REQUIRE(history);
  REQUIRE(history->size() == 2);
  CHECK((*history)[1].to.status == SlotStatus::kRunning);
}

TEST_CASE("history appends on a file system without append rewrite the file whole") {
  auto fs = std::make_shared<testing::MemFileSystem>();
  auto db = make_file_state_database(fs, "/db");
  REQUIRE(db->append_history({change(kHistoryT, kHistoryT, std::nullopt, SlotStatus::kReady)}));
  REQUIRE(
      db->append_history({change(kHistoryT, kHistoryT, SlotStatus::kReady, SlotStatus::kRunning)}));
  CHECK(db->slot_history({"wf", kHistoryT}).value().size() == 2);
  fs->set_down(true);
  CHECK_FALSE(db->append_history({change(kHistoryT, kHistoryT, std::nullopt, SlotStatus::kReady)}));
}

TEST_CASE("rerun markers of many slots are written as one group") {
  auto fs = std::make_shared<testing::MemFileSystem>();
  auto db = make_file_state_database(fs, "/db");
  REQUIRE(
      db->mark_reruns({{"wf", kHistoryT}, {"wf", kHistoryT + hours(30)}}, kHistoryT + hours(40)));
  CHECK(db->rerun_times("wf", kHistoryT + hours(41)).value() ==
        std::vector<Time>{kHistoryT, kHistoryT + hours(30)});
}
