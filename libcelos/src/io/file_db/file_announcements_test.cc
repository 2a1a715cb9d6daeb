// The announced dataset instances of the file state database (io/file_db/file_announcements.h):
// the packed day files, idempotency, torn lines, the per-instance files of earlier versions and
// the cache, through the StateDatabase interface on the local disk.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "celos/file_system.h"
#include "celos/file_system_wrapper.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"
#include "testing/temp_dir.h"

using namespace celos;
using std::chrono::hours;

namespace {

const Time kAnnouncedDay = make_time(2015, 9, 15);
const Time kAnnouncedAt = make_time(2015, 9, 17, 12);

// A line of a day file, as the database should write it.
std::string day_line(Time time, Time announced) {
  return "{\"time\":\"" + format_time(time) + "\",\"announced\":\"" + format_time(announced) +
         "\"}";
}

std::vector<Time> hours_of(std::initializer_list<int> hours_of_day) {
  std::vector<Time> out;
  for (int h : hours_of_day) out.push_back(kAnnouncedDay + hours(h));
  return out;
}

std::vector<Time> announced_in(StateDatabase& db, const std::string& dataset) {
  auto times = db.announced_instances(dataset, kAnnouncedDay, kAnnouncedDay + hours(72));
  REQUIRE(times);
  return *times;
}

// The local disk, counting the calls that read a file or ask whether one exists.
class LocalCallCounter : public FileSystemWrapper {
 public:
  LocalCallCounter() : FileSystemWrapper(make_local_file_system()) {}
  Result<bool> exists(const std::string& path) override {
    ++exists_calls;
    return FileSystemWrapper::exists(path);
  }
  Result<std::string> read(const std::string& path) override {
    ++reads;
    return FileSystemWrapper::read(path);
  }
  std::atomic<int> exists_calls{0}, reads{0};
};

}  // namespace

TEST_CASE("a batch of announcements is packed into one file per dataset and day") {
  testing::TempDir dir;
  auto db = make_file_state_database(make_local_file_system(), dir.path());
  REQUIRE(db->announce_instances({{"logs", kAnnouncedDay + hours(3)},
                                  {"logs", kAnnouncedDay + hours(1)},
                                  {"logs", kAnnouncedDay + hours(25)},
                                  {"clicks", kAnnouncedDay + hours(2)},
                                  {"logs", kAnnouncedDay + hours(1)}},
                                 kAnnouncedAt));
  CHECK(testing::read_text_file(dir / "datasets/logs/2015-09-15.jsonl") ==
        "\n{\"time\":\"2015-09-15T01:00:00.000Z\",\"announced\":\"2015-09-17T12:00:00.000Z\"}\n"
        "{\"time\":\"2015-09-15T03:00:00.000Z\",\"announced\":\"2015-09-17T12:00:00.000Z\"}\n");
  CHECK(testing::read_text_file(dir / "datasets/logs/2015-09-16.jsonl") ==
        "\n" + day_line(kAnnouncedDay + hours(25), kAnnouncedAt) + "\n");
  CHECK(testing::read_text_file(dir / "datasets/clicks/2015-09-15.jsonl") ==
        "\n" + day_line(kAnnouncedDay + hours(2), kAnnouncedAt) + "\n");
  std::vector<std::string> entries;  // no day directory, no file per instance
  for (const auto& e : std::filesystem::directory_iterator(dir / "datasets/logs")) {
    entries.push_back(e.path().filename().string());
  }
  std::sort(entries.begin(), entries.end());
  CHECK(entries == std::vector<std::string>{"2015-09-15.jsonl", "2015-09-16.jsonl"});

  CHECK(announced_in(*db, "logs") == hours_of({1, 3, 25}));
  CHECK(announced_in(*db, "clicks") == hours_of({2}));
  CHECK(*db->announced_instances("logs", kAnnouncedDay + hours(2), kAnnouncedDay + hours(25)) ==
        hours_of({3}));
  auto fresh = make_file_state_database(make_local_file_system(), dir.path());  // nothing cached
  CHECK(announced_in(*fresh, "logs") == hours_of({1, 3, 25}));
}

TEST_CASE("announcing an instance again writes nothing and keeps the first stamp") {
  testing::TempDir dir;
  const std::string file = dir / "datasets/logs/2015-09-15.jsonl";
  auto db = make_file_state_database(make_local_file_system(), dir.path());
  REQUIRE(db->announce_instances(
      {{"logs", kAnnouncedDay + hours(1)}, {"logs", kAnnouncedDay + hours(2)}}, kAnnouncedAt));
  const std::string first = testing::read_text_file(file);
  REQUIRE(db->announce_instances(
      {{"logs", kAnnouncedDay + hours(2)}, {"logs", kAnnouncedDay + hours(1)}},
      kAnnouncedAt + hours(1)));
  REQUIRE(db->announce_instance("logs", kAnnouncedDay + hours(1), kAnnouncedAt + hours(2)));
  CHECK(testing::read_text_file(file) == first);
  auto other = make_file_state_database(make_local_file_system(), dir.path());  // nothing cached
  REQUIRE(other->announce_instance("logs", kAnnouncedDay + hours(2), kAnnouncedAt + hours(3)));
  CHECK(testing::read_text_file(file) == first);
  // A new instance among announced ones: its line alone is appended.
  REQUIRE(db->announce_instances(
      {{"logs", kAnnouncedDay + hours(1)}, {"logs", kAnnouncedDay + hours(4)}},
      kAnnouncedAt + hours(4)));
  CHECK(testing::read_text_file(file) ==
        first + "\n" + day_line(kAnnouncedDay + hours(4), kAnnouncedAt + hours(4)) + "\n");
  CHECK(announced_in(*db, "logs") == hours_of({1, 2, 4}));
}

TEST_CASE("a torn last line is skipped and the next append keeps its own line") {
  testing::TempDir dir;
  const std::string file = dir / "datasets/logs/2015-09-15.jsonl";
  const std::string torn =
      "\n" + day_line(kAnnouncedDay + hours(1), kAnnouncedAt) + "\n\n{\"time\":\"2015-09-15T02:0";
  testing::write_text_file(file, torn);  // a crash in the middle of the second append
  auto db = make_file_state_database(make_local_file_system(), dir.path());
  CHECK(announced_in(*db, "logs") == hours_of({1}));
  REQUIRE(db->announce_instances(
      {{"logs", kAnnouncedDay + hours(2)}, {"logs", kAnnouncedDay + hours(3)}}, kAnnouncedAt));
  CHECK(testing::read_text_file(file) ==
        torn + "\n" + day_line(kAnnouncedDay + hours(2), kAnnouncedAt) + "\n" +
            day_line(kAnnouncedDay + hours(3), kAnnouncedAt) + "\n");
  CHECK(announced_in(*db, "logs") == hours_of({1, 2, 3}));
  auto fresh = make_file_state_database(make_local_file_system(), dir.path());
  CHECK(announced_in(*fresh, "logs") == hours_of({1, 2, 3}));
}

TEST_CASE("the per-instance files of earlier versions are still read, merged, not written again") {
  testing::TempDir dir;
  const std::string old_file = "{\"announced\":\"2015-09-15T03:05:00.000Z\"}\n";
  testing::write_text_file(dir / "datasets/logs/2015-09-15/03:00:00.000Z", old_file);
  testing::write_text_file(dir / "datasets/logs/2015-09-16/01:00:00.000Z", old_file);
  auto db = make_file_state_database(make_local_file_system(), dir.path());
  CHECK(announced_in(*db, "logs") == hours_of({3, 25}));
  REQUIRE(db->announce_instances(
      {{"logs", kAnnouncedDay + hours(3)}, {"logs", kAnnouncedDay + hours(4)}}, kAnnouncedAt));
  CHECK(testing::read_text_file(dir / "datasets/logs/2015-09-15.jsonl") ==
        "\n" + day_line(kAnnouncedDay + hours(4), kAnnouncedAt) + "\n");
  CHECK_FALSE(std::filesystem::exists(dir / "datasets/logs/2015-09-16.jsonl"));
  CHECK(announced_in(*db, "logs") == hours_of({3, 4, 25}));
  // A file of the old layout that appears later (copied back by hand) is seen too.
  testing::write_text_file(dir / "datasets/logs/2015-09-15/05:00:00.000Z", old_file);
  CHECK(announced_in(*db, "logs") == hours_of({3, 4, 5, 25}));
}

TEST_CASE("a line appended behind the database's back is read although the mtime looks the same") {
  testing::TempDir dir;
  const std::string file = dir / "datasets/logs/2015-09-15.jsonl";
  testing::write_text_file(file, "\n" + day_line(kAnnouncedDay + hours(1), kAnnouncedAt) + "\n");
  // Older than the racy second, so that the read is cached.
  const auto mtime = std::filesystem::last_write_time(file) - std::chrono::seconds(10);
  std::filesystem::last_write_time(file, mtime);
  auto db = make_file_state_database(make_local_file_system(), dir.path());
  REQUIRE(announced_in(*db, "logs") == hours_of({1}));
  {
    std::ofstream out(file, std::ios::app);
    out << "\n" << day_line(kAnnouncedDay + hours(2), kAnnouncedAt) << "\n";
  }
  std::filesystem::last_write_time(file, mtime);  // only the size tells
  CHECK(announced_in(*db, "logs") == hours_of({1, 2}));
}

TEST_CASE("announcements ask no exists() each and read back no day they appended to") {
  testing::TempDir dir;
  auto counting = std::make_shared<LocalCallCounter>();
  auto db = make_file_state_database(counting, dir.path());
  std::vector<StateDatabase::Announcement> batch;
  for (int m = 0; m < 200; ++m) {
    batch.push_back({"minutely", kAnnouncedDay + std::chrono::minutes(m)});
  }
  REQUIRE(db->announce_instances(batch, kAnnouncedAt));
  batch.push_back({"minutely", kAnnouncedDay + std::chrono::minutes(200)});
  REQUIRE(db->announce_instances(batch, kAnnouncedAt + hours(1)));  // one new, 200 known
  auto times = db->announced_instances("minutely", kAnnouncedDay, kAnnouncedDay + hours(24));
  REQUIRE(times);
  CHECK(times->size() == 201);
  CHECK(counting->exists_calls == 0);
  CHECK(counting->reads == 0);  // the cache took each append
  const std::string text = testing::read_text_file(dir / "datasets/minutely/2015-09-15.jsonl");
  CHECK(std::count(text.begin(), text.end(), '\n') == 2 + 201);  // two appends of 201 lines
}
