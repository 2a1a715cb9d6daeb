#include <catch2/catch.hpp>

#include "celos/file_system.h"
#include "celos/state_codecs.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"
#include "testing/fakes.h"
#include "testing/temp_dir.h"

using namespace celos;
using std::chrono::hours;

namespace {
const Time kT = make_time(2015, 9, 15, 1);
}

TEST_CASE("slot states are stored at the original path with the original fields") {
  testing::TempDir dir;
  auto db = make_file_state_database(make_local_file_system(), dir.path());
  REQUIRE(db->put_slots({SlotState::of({"wordcount-lax", kT}, SlotStatus::kSuccess, "0008681-W")}));
  const std::string text =
      testing::read_text_file(dir / "state/wordcount-lax/2015-09-15/01:00:00.000Z");
  CHECK(text ==
        "{\"time\":\"2015-09-15T01:00:00.000Z\",\"status\":\"SUCCESS\","
        "\"externalID\":\"0008681-W\",\"retryCount\":0}\n");
  auto back = db->get_slot({"wordcount-lax", kT});
  REQUIRE(back);
  REQUIRE(back->has_value());
  CHECK((*back)->external_id == "0008681-W");
}

TEST_CASE("a state directory of the original Celos is read as is") {
  testing::TempDir dir;
  // As the original wrote it: pretty-printed, no "time" field, null externalID.
  testing::write_text_file(dir / "state/wordcount-nyc/2015-09-15/00:00:00.000Z",
                           "{\n  \"status\" : \"SUCCESS\",\n  \"externalID\" : "
                           "\"0008681-150911205802478-oozie-oozi-W\",\n  \"retryCount\" : 0\n}");
  testing::write_text_file(dir / "state/wordcount-nyc/2015-09-15/01:00:00.000Z",
                           "{\n  \"status\" : \"READY\",\n  \"externalID\" : null,\n"
                           "  \"retryCount\" : 2\n}");
  testing::write_text_file(dir / "rerun/wordcount-nyc/2015-08-01/01:00:00.000Z", "");
  auto db = make_file_state_database(make_local_file_system(), dir.path());
  auto slots = db->get_slots("wordcount-nyc", make_time(2015, 9, 14), make_time(2015, 9, 16));
  REQUIRE(slots);
  REQUIRE(slots->size() == 2);
  CHECK(slots->at(0).id.time == make_time(2015, 9, 15, 0));
  CHECK(slots->at(0).external_id == "0008681-150911205802478-oozie-oozi-W");
  CHECK(slots->at(1).status == SlotStatus::kReady);
  CHECK(slots->at(1).retry_count == 2);
  CHECK_FALSE(slots->at(1).external_id);
  // A marker without rerunTime counts from its modification time (just now).
  auto reruns =
      db->rerun_times("wordcount-nyc", Time{std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::system_clock::now().time_since_epoch())});
  REQUIRE(reruns);
  CHECK(*reruns == std::vector<Time>{make_time(2015, 8, 1, 1)});
}

TEST_CASE("get_slots returns start inclusive to end exclusive across day directories") {
  testing::MemFileSystem mem;
  auto fs = std::shared_ptr<FileSystem>(&mem, [](FileSystem*) {});
  auto db = make_file_state_database(fs, "/db");
  std::vector<SlotState> states;
  for (int h = 0; h < 48; ++h) {
    states.push_back(
        SlotState::of({"wf", make_time(2015, 9, 15) + hours(h)}, SlotStatus::kReady, std::nullopt));
  }
  REQUIRE(db->put_slots(states));
  auto slots = db->get_slots("wf", make_time(2015, 9, 15, 20), make_time(2015, 9, 16, 3));
  REQUIRE(slots);
  REQUIRE(slots->size() == 7);
  CHECK(slots->front().id.time == make_time(2015, 9, 15, 20));
  CHECK(slots->back().id.time == make_time(2015, 9, 16, 2));
}

TEST_CASE("a state changed behind the database's back is seen on the next read") {
  testing::TempDir dir;
  auto db = make_file_state_database(make_local_file_system(), dir.path());
  REQUIRE(db->put_slots({SlotState::of({"wf", kT}, SlotStatus::kFailure, "j")}));
  REQUIRE(db->get_slots("wf", kT, kT + hours(1))->at(0).status == SlotStatus::kFailure);
  testing::write_text_file(dir / "state/wf/2015-09-15/01:00:00.000Z",
                           "{\"status\":\"SUCCESS\",\"externalID\":\"j\",\"retryCount\":0}");
  CHECK(db->get_slots("wf", kT, kT + hours(1))->at(0).status == SlotStatus::kSuccess);
}

TEST_CASE("a corrupt slot file is an error naming the file and is left alone") {
  testing::TempDir dir;
  testing::write_text_file(dir / "state/wf/2015-09-15/01:00:00.000Z", "{\"status\":\"DONE\"}");
  auto db = make_file_state_database(make_local_file_system(), dir.path());
  auto slots = db->get_slots("wf", kT, kT + hours(1));
  REQUIRE_FALSE(slots);
  CHECK(slots.error().code == ErrorCode::kCorrupt);
  CHECK_THAT(slots.error().message, Catch::Contains("state/wf/2015-09-15/01:00:00.000Z"));
  CHECK_THAT(slots.error().message, Catch::Contains("DONE"));
  CHECK(testing::read_text_file(dir / "state/wf/2015-09-15/01:00:00.000Z") ==
        "{\"status\":\"DONE\"}");
  CHECK_FALSE(db->get_slot({"wf", kT}));
}

TEST_CASE("rerun markers carry their time and expire after fourteen days once the slot is final") {
  testing::MemFileSystem mem;
  auto fs = std::shared_ptr<FileSystem>(&mem, [](FileSystem*) {});
  auto db = make_file_state_database(fs, "/db");
  const Time asked = make_time(2015, 10, 1);
  REQUIRE(db->mark_rerun({"wf", kT}, asked));
  REQUIRE(db->put_slots({SlotState::of({"wf", kT}, SlotStatus::kRunning, "j")}));
  CHECK(db->rerun_times("wf", asked + hours(24 * 30)).value() == std::vector<Time>{kT});
  REQUIRE(db->put_slots({SlotState::of({"wf", kT}, SlotStatus::kSuccess, "j")}));
  CHECK(mem.read("/db/rerun/wf/2015-09-15/01:00:00.000Z").value() ==
        "{\"rerunTime\":\"2015-10-01T00:00:00.000Z\"}\n");
  CHECK(db->rerun_times("wf", asked + hours(24 * 14)).value() == std::vector<Time>{kT});
  CHECK(db->rerun_times("wf", asked + hours(24 * 14 + 1)).value().empty());
  CHECK_FALSE(mem.exists("/db/rerun/wf/2015-09-15/01:00:00.000Z").value());
}

TEST_CASE("pausing writes a flag file and unpausing removes it") {
  testing::TempDir dir;
  auto db = make_file_state_database(make_local_file_system(), dir.path());
  CHECK_FALSE(db->is_paused("wf").value());
  REQUIRE(db->set_paused("wf", true));
  CHECK(db->is_paused("wf").value());
  CHECK(make_local_file_system()->exists(dir / "paused/wf").value());
  REQUIRE(db->set_paused("wf", false));
  CHECK_FALSE(db->is_paused("wf").value());
}

TEST_CASE("temporary files left by a crash are ignored") {
  testing::TempDir dir;
  testing::write_text_file(dir / "state/wf/2015-09-15/.01:00:00.000Z.tmp-1-1", "{\"sta");
  auto db = make_file_state_database(make_local_file_system(), dir.path());
  auto slots = db->get_slots("wf", kT, kT + hours(1));
  REQUIRE(slots);
  CHECK(slots->empty());
}

TEST_CASE("the optional keys of part two round-trip and stay absent when unused") {
  SlotState state = SlotState::of({"wf", kT}, SlotStatus::kWaiting, std::nullopt, 1);
  CHECK(slot_state_to_json(state).find("message") == std::string::npos);
  state.message = "sbatch: error: invalid partition specified: nope";
  state.retry_at = kT + hours(2);
  state.consumed["clicks"] = {kT - hours(1), kT};
  auto back = slot_state_from_json(state.id, slot_state_to_json(state));
  REQUIRE(back);
  CHECK(*back == state);
  auto bad = slot_state_from_json(state.id, R"({"status":"WAITING","retryAt":"yesterday"})");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::kCorrupt);
}

TEST_CASE("a retryCount that is no count is a corrupt state, not an exception") {
  // Found by fuzz_state_file: a number above INT64_MAX made Boost.JSON's to_number throw.
  for (const char* retry : {"15532559102904483822", "-1", "1.5", "2147483648", "1e3"}) {
    const std::string text = std::string(R"({"status":"WAITING","retryCount":)") + retry + "}";
    auto state = slot_state_from_json({"wf", kT}, text);
    INFO(text);
    REQUIRE_FALSE(state);
    CHECK(state.error().code == ErrorCode::kCorrupt);
    CHECK_THAT(state.error().message, Catch::Contains("retryCount"));
  }
  auto most = slot_state_from_json({"wf", kT}, R"({"status":"WAITING","retryCount":2147483647})");
  REQUIRE(most);
  CHECK(most->retry_count == 2147483647);
}

namespace {
// Counts the files read, to tell a cached day from a re-read one.
class CountingFileSystem : public testing::MemFileSystem {
 public:
  Result<std::string> read(const std::string& path) override {
    ++reads;
    return MemFileSystem::read(path);
  }
  int reads = 0;
};
}  // namespace

TEST_CASE("a write keeps its day cached with the written states: the next read reads no file") {
  CountingFileSystem mem;
  auto fs = std::shared_ptr<FileSystem>(&mem, [](FileSystem*) {});
  auto db = make_file_state_database(fs, "/db");
  std::vector<SlotState> day;
  for (int h = 0; h < 24; ++h) {
    day.push_back(
        SlotState::of({"wf", make_time(2015, 9, 15) + hours(h)}, SlotStatus::kSuccess, "j"));
  }
  REQUIRE(db->put_slots(day));
  REQUIRE(db->get_slots("wf", make_time(2015, 9, 15), make_time(2015, 9, 16))->size() == 24);
  CHECK(mem.reads == 24);  // the first read of the day reads its files

  day[5] = SlotState::of({"wf", make_time(2015, 9, 15, 5)}, SlotStatus::kRunning, "k");
  REQUIRE(db->put_slots({day[5]}));
  auto slots = db->get_slots("wf", make_time(2015, 9, 15), make_time(2015, 9, 16));
  REQUIRE(slots);
  CHECK(*slots == day);
  CHECK(mem.reads == 24);  // no re-read of the 24 files for one written slot

  // A change the database did not make still shows: the directory changed again after it.
  REQUIRE(fs->write_files({{"/db/state/wf/2015-09-15/06:00:00.000Z",
                            slot_state_to_json(SlotState::of({"wf", make_time(2015, 9, 15, 6)},
                                                             SlotStatus::kFailure, "x")) +
                                "\n"}}));
  slots = db->get_slots("wf", make_time(2015, 9, 15, 6), make_time(2015, 9, 15, 7));
  REQUIRE(slots);
  CHECK(slots->at(0).status == SlotStatus::kFailure);
}

namespace {
std::vector<SlotState> hourly(const std::string& workflow, Time day, SlotStatus status) {
  std::vector<SlotState> out;
  for (int h = 0; h < 24; ++h) out.push_back(SlotState::of({workflow, day + hours(h)}, status, ""));
  return out;
}
}  // namespace

TEST_CASE("days of the step's window that had no directory take the step's writes: no re-read") {
  CountingFileSystem mem;
  auto fs = std::shared_ptr<FileSystem>(&mem, [](FileSystem*) {});
  auto db = make_file_state_database(fs, "/db");
  const Time start = make_time(2015, 9, 14), end = make_time(2015, 9, 16);
  auto window = db->get_window("wf", start, end);  // nothing stored yet
  REQUIRE(window);
  CHECK(window->open.empty());

  auto first = hourly("wf", make_time(2015, 9, 14), SlotStatus::kReady);
  auto second = hourly("wf", make_time(2015, 9, 15), SlotStatus::kWaiting);
  std::vector<SlotState> all = first;
  all.insert(all.end(), second.begin(), second.end());
  REQUIRE(db->put_slots(all));
  window = db->get_window("wf", start, end);
  REQUIRE(window);
  CHECK(window->open == all);
  CHECK(mem.reads == 0);  // the first step's files are not read back
}

TEST_CASE("a new day directory that someone else also wrote into is read again") {
  CountingFileSystem mem;
  auto fs = std::shared_ptr<FileSystem>(&mem, [](FileSystem*) {});
  auto db = make_file_state_database(fs, "/db");
  const Time day = make_time(2015, 9, 15);
  REQUIRE(db->get_window("wf", day, day + hours(24)));
  // Between the step's read and its write, another writer creates the day with a slot of its own.
  const auto other = SlotState::of({"wf", day + hours(23)}, SlotStatus::kFailure, "x");
  REQUIRE(fs->write_files(
      {{"/db/state/wf/2015-09-15/23:00:00.000Z", slot_state_to_json(other) + "\n"}}));
  auto ours = hourly("wf", day, SlotStatus::kReady);
  ours.pop_back();
  REQUIRE(db->put_slots(ours));
  auto window = db->get_window("wf", day, day + hours(24));
  REQUIRE(window);
  REQUIRE(window->open.size() == 23);
  REQUIRE(window->closed.size() == 1);
  CHECK(window->closed[0] == std::pair{other.id.time, SlotStatus::kFailure});
}

TEST_CASE("cached days older than the step's window are dropped") {
  CountingFileSystem mem;
  auto fs = std::shared_ptr<FileSystem>(&mem, [](FileSystem*) {});
  auto db = make_file_state_database(fs, "/db");
  const Time day = make_time(2015, 9, 15);
  REQUIRE(db->put_slots(hourly("wf", day, SlotStatus::kSuccess)));
  REQUIRE(db->get_window("wf", day, day + hours(24)));
  REQUIRE(mem.reads == 24);
  REQUIRE(db->get_window("wf", day, day + hours(24)));
  CHECK(mem.reads == 24);                                           // cached
  REQUIRE(db->get_window("wf", day + hours(24), day + hours(48)));  // the window moved on
  REQUIRE(db->get_slots("wf", day, day + hours(24))->size() == 24);
  CHECK(mem.reads == 48);  // the old day was dropped from the cache and read again
}

TEST_CASE("rerun markers are read once and then from the cache until their directory changes") {
  CountingFileSystem mem;
  auto fs = std::shared_ptr<FileSystem>(&mem, [](FileSystem*) {});
  auto db = make_file_state_database(fs, "/db");
  const Time day = make_time(2015, 9, 15), asked = make_time(2015, 9, 20);
  std::vector<SlotId> marked;
  for (int h = 0; h < 5; ++h) marked.push_back({"wf", day + hours(h)});
  REQUIRE(db->mark_reruns(marked, asked));
  std::vector<Time> expected;
  for (const SlotId& id : marked) expected.push_back(id.time);
  CHECK(db->rerun_times("wf", asked).value() == expected);
  CHECK(mem.reads == 5);  // a day not cached yet is read
  CHECK(db->rerun_times("wf", asked).value() == expected);
  CHECK(mem.reads == 5);  // unchanged: no marker read again

  // Our own marker joins the cached day.
  REQUIRE(db->mark_rerun({"wf", day + hours(7)}, asked));
  expected.push_back(day + hours(7));
  CHECK(db->rerun_times("wf", asked).value() == expected);
  CHECK(mem.reads == 5);

  // A marker written behind the database's back is seen: its directory changed.
  REQUIRE(fs->write_files({{"/db/rerun/wf/2015-09-15/06:00:00.000Z",
                            "{\"rerunTime\":\"2015-09-20T00:00:00.000Z\"}\n"}}));
  expected.insert(expected.end() - 1, day + hours(6));
  CHECK(db->rerun_times("wf", asked).value() == expected);
  CHECK(mem.reads == 5 + 7);

  // A removed day directory is gone from the answer.
  REQUIRE(fs->remove("/db/rerun/wf/2015-09-15"));
  CHECK(db->rerun_times("wf", asked).value().empty());
}

TEST_CASE("an expired rerun marker read from the cache is removed and stays removed") {
  CountingFileSystem mem;
  auto fs = std::shared_ptr<FileSystem>(&mem, [](FileSystem*) {});
  auto db = make_file_state_database(fs, "/db");
  const Time asked = make_time(2015, 10, 1);
  REQUIRE(db->mark_reruns({{"wf", kT}, {"wf", kT + hours(1)}}, asked));
  REQUIRE(db->put_slots({SlotState::of({"wf", kT}, SlotStatus::kSuccess, "j"),
                         SlotState::of({"wf", kT + hours(1)}, SlotStatus::kRunning, "k")}));
  CHECK(db->rerun_times("wf", asked).value().size() == 2);  // cached now
  const Time later = asked + hours(24 * 15);
  CHECK(db->rerun_times("wf", later).value() == std::vector<Time>{kT + hours(1)});
  CHECK_FALSE(mem.exists("/db/rerun/wf/2015-09-15/01:00:00.000Z").value());
  CHECK(db->rerun_times("wf", later).value() == std::vector<Time>{kT + hours(1)});
}

TEST_CASE("an expired rerun marker whose file name is not in the canonical form is removed") {
  CountingFileSystem mem;
  auto fs = std::shared_ptr<FileSystem>(&mem, [](FileSystem*) {});
  auto db = make_file_state_database(fs, "/db");
  REQUIRE(fs->write_files(
      {{"/db/rerun/wf/2015-09-15/01:00Z", "{\"rerunTime\":\"2015-10-01T00:00:00.000Z\"}\n"}}));
  REQUIRE(db->mark_rerun({"wf", kT + hours(1)}, make_time(2015, 10, 1)));  // stays: RUNNING
  REQUIRE(db->put_slots({SlotState::of({"wf", kT}, SlotStatus::kSuccess, "j"),
                         SlotState::of({"wf", kT + hours(1)}, SlotStatus::kRunning, "k")}));
  CHECK(db->rerun_times("wf", make_time(2015, 10, 2)).value() ==
        std::vector<Time>{kT, kT + hours(1)});
  CHECK(db->rerun_times("wf", make_time(2015, 10, 16)).value() == std::vector<Time>{kT + hours(1)});
  CHECK_FALSE(mem.exists("/db/rerun/wf/2015-09-15/01:00Z").value());
}
