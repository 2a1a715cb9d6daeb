// Stories of data checks in bulk and with back-off (issue 28): the paths that wait in one
// directory are answered by one listing of it, and a slot whose data stays missing is checked
// less and less often until an event, a rerun or a step of its workflow checks it at once.
#include "model/data_checks.h"

#include <set>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "celos/file_system_wrapper.h"
#include "model/step_context.h"
#include "testing/scheduler_world.h"

using namespace celos;
using World = celos::testing::SchedulerWorld;
using celos::testing::kStart;
using std::chrono::hours;
using std::chrono::minutes;

namespace {

// An hourly workflow whose slot HH of 2015-09-13 waits for /in/2015-09-13/HH00 on the default
// (remote) file system.
void add_day_workflow(World& w, const std::string& id = "wf", const std::string& uri = "") {
  w.add(id, make_hdfs_check_trigger("/in/${year}-${month}-${day}/${hour}00", uri));
}

// The 24 slots of 2015-09-13 are in the window, none of the next day.
const Time kEndOfDay = kStart + hours(23) + minutes(10);

// A file system that prefers listing but whose listings are refused (as LISTSTATUS of a path
// without read permission): exists() answers.
class RefusingListings final : public FileSystemWrapper {
 public:
  using FileSystemWrapper::FileSystemWrapper;
  bool prefers_listing() const override { return true; }
  Result<std::vector<FileStatus>> list(const std::string& directory) override {
    return fail("permission denied: " + directory, ErrorCode::kInvalid);
  }
};

// A remote file system that cannot be reached (connection refused): every call is kUnavailable.
class UnreachableFileSystem final : public FileSystemWrapper {
 public:
  using FileSystemWrapper::FileSystemWrapper;
  bool prefers_listing() const override { return true; }
  Result<std::vector<FileStatus>> list(const std::string& directory) override {
    ++lists;
    return fail("connection refused: list " + directory, ErrorCode::kUnavailable);
  }
  Result<bool> exists(const std::string& path) override {
    ++exists_calls;
    return fail("connection refused: exists " + path, ErrorCode::kUnavailable);
  }
  std::atomic<int> lists{0};
  std::atomic<int> exists_calls{0};
};

// The data file system's calls so far: exists() and list().
int calls(const World& w) { return w.data_fs->exists_calls() + w.data_fs->list_calls(); }

DataCheckBackoff every_minute() { return {.step = std::chrono::seconds(60), .max = minutes(10)}; }

}  // namespace

TEST_CASE("the waiting paths of one directory are answered by one listing of it") {
  World w;
  w.data_fs->set_prefers_listing(true);
  add_day_workflow(w);
  REQUIRE(w.data_fs->write("/in/2015-09-13/0500", "x"));
  auto report = w.scheduler.step(kEndOfDay);
  CHECK(w.data_fs->list_calls() == 1);
  CHECK(w.data_fs->exists_calls() == 0);
  CHECK(report.data_checks == 24);
  CHECK(report.data_check_calls == 1);
  CHECK(w.status("wf", kStart + hours(5)) == SlotStatus::kReady);  // seen in the same step
  CHECK(w.status("wf", kStart + hours(4)) == SlotStatus::kWaiting);
  CHECK(w.status("wf", kStart + hours(6)) == SlotStatus::kWaiting);
}

TEST_CASE("a directory that does not exist answers all of its waiting paths with one listing") {
  World w;
  w.data_fs->set_prefers_listing(true);
  add_day_workflow(w, "a");
  add_day_workflow(w, "b");  // the same paths: asked once
  auto report = w.scheduler.step(kEndOfDay);
  CHECK(w.data_fs->list_calls() == 1);
  CHECK(w.data_fs->exists_calls() == 0);
  CHECK(report.data_checks == 24);
  CHECK(w.status("a", kStart) == SlotStatus::kWaiting);
}

TEST_CASE("a path alone in its directory, and every path where listing costs more, is asked") {
  World w;  // the in-memory file system, like the local disk, does not prefer listing
  add_day_workflow(w);
  auto report = w.scheduler.step(kEndOfDay + hours(1));  // 24 paths on one day, 1 on the next
  CHECK(w.data_fs->list_calls() == 0);
  CHECK(w.data_fs->exists_calls() == 25);
  CHECK(report.data_check_calls == 25);

  World listing;
  listing.data_fs->set_prefers_listing(true);
  add_day_workflow(listing);
  report = listing.scheduler.step(kEndOfDay + hours(1));
  CHECK(listing.data_fs->list_calls() == 1);
  CHECK(listing.data_fs->exists_calls() == 1);  // 2015-09-14/0000 has its directory to itself
  CHECK(report.data_check_calls == 2);
}

TEST_CASE("a listing that is refused falls back to one exists() per path") {
  auto refusing = std::make_shared<RefusingListings>(std::make_shared<testing::MemFileSystem>());
  World w({.data = refusing});
  add_day_workflow(w);
  REQUIRE(refusing->write("/in/2015-09-13/0500", "x"));
  auto report = w.scheduler.step(kEndOfDay);
  CHECK(report.errors.empty());
  CHECK(report.data_check_calls == 25);  // the refused listing and 24 exists()
  CHECK(w.status("wf", kStart + hours(5)) == SlotStatus::kReady);
}

TEST_CASE("the planned directories are listed by tasks of their own, an unreachable one once") {
  World w;
  w.data_fs->set_prefers_listing(true);
  REQUIRE(w.data_fs->write("/in/a/0100", "x"));
  const std::string down = "webhdfs://down:50070";
  auto unreachable = std::make_shared<UnreachableFileSystem>(w.data_fs);
  testing::FakeFileSystemResolver resolver(w.data_fs);
  resolver.add(down, unreachable);
  detail::StepTriggerContext context(kStart, *w.db, resolver);
  context.plan_listings({{"", "/in/a/0000"},
                         {"", "/in/a/0100"},
                         {"", "/in/c/0000"},
                         {down, "/x/0000"},
                         {down, "/x/0100"},
                         {down, "/y/0000"},
                         {down, "/y/0100"}});
  auto tasks = context.listing_tasks();
  CHECK(tasks.size() == 3);         // /in/a, /x and /y; /in/c's one path is asked alone
  for (auto& task : tasks) task();  // as the step's executor runs them, before the asks
  CHECK(w.data_fs->list_calls() == 1);
  CHECK(unreachable->lists == 1);  // /x could not be listed: /y is not tried
  // The asks find the listing done; the unreachable file system fails them without a call.
  CHECK(context.path_exists("", "/in/a/0100").value());
  CHECK_FALSE(context.path_exists("", "/in/a/0000").value());
  CHECK(w.data_fs->list_calls() == 1);
  CHECK(w.data_fs->exists_calls() == 0);
  auto failed = context.path_exists(down, "/y/0000");
  REQUIRE_FALSE(failed);
  CHECK(failed.error().code == ErrorCode::kUnavailable);
  CHECK(unreachable->lists == 1);
  CHECK(unreachable->exists_calls == 0);
}

TEST_CASE("only plain absolute paths are grouped by their directory") {
  using detail::split_plain_path;
  CHECK(split_plain_path("/a/b/c") == std::make_pair(std::string("/a/b"), std::string("c")));
  CHECK(split_plain_path("/c") == std::make_pair(std::string("/"), std::string("c")));
  for (const char* odd : {"", "/", "c", "a/c", "/a/", "/a//c", "/a/./c", "/a/../c", "/a/.."}) {
    INFO(odd);
    CHECK_FALSE(split_plain_path(odd));
  }
}

TEST_CASE("a slot whose data stays missing is checked after 1, 2, 4, 8 steps, at most 10 min") {
  World w;
  w.data_fs->set_prefers_listing(true);  // a check is a round trip, as on WebHDFS
  w.scheduler.set_data_check_backoff(every_minute());
  w.add("wf", make_hdfs_check_trigger("/in/${hour}", ""));
  const Time t0 = kStart + minutes(10);  // one slot, 00:00, in the window for 50 minutes
  std::vector<int> checked_at;
  int deferred = 0;
  for (int k = 0; k < 46; ++k) {
    const int before = calls(w);
    auto report = w.scheduler.step(t0 + minutes(k));
    if (calls(w) > before) checked_at.push_back(k);
    deferred += report.data_checks_deferred;
  }
  CHECK(checked_at == std::vector<int>{0, 1, 3, 7, 15, 25, 35, 45});
  CHECK(deferred == 46 - 8);
  // While it backs off /trigger-status says when it is checked next.
  CHECK(w.scheduler.next_data_check({"wf", kStart}, t0 + minutes(46)) == t0 + minutes(55));
  CHECK_FALSE(w.scheduler.next_data_check({"wf", kStart}, t0 + minutes(55)));  // due
}

TEST_CASE("data that arrives is seen at the next check, and an event's step checks at once") {
  World w;
  w.data_fs->set_prefers_listing(true);
  w.scheduler.set_data_check_backoff(every_minute());
  w.add("wf", make_hdfs_check_trigger("/in/${hour}", ""));
  const Time t0 = kStart + minutes(10);
  for (int k = 0; k < 4; ++k) w.scheduler.step(t0 + minutes(k));  // checked at 0, 1, 3
  REQUIRE(w.data_fs->write("/in/00", "x"));
  w.scheduler.step(t0 + minutes(4));  // backing off until minute 7
  CHECK(w.status("wf", kStart) == SlotStatus::kWaiting);
  // A step of the workflow (an announcement's, a file's, an operator's) checks now.
  w.scheduler.step(t0 + minutes(4) + std::chrono::seconds(5), std::set<std::string>{"wf"});
  CHECK(w.status("wf", kStart) == SlotStatus::kReady);
}

TEST_CASE("a rerun and a step of the workflow start the back-off over") {
  World w;
  w.data_fs->set_prefers_listing(true);
  w.scheduler.set_data_check_backoff(every_minute());
  w.add("wf", make_hdfs_check_trigger("/in/${hour}", ""));
  const Time t0 = kStart + hours(1) + minutes(10);  // slots 00:00 and 01:00
  w.store("wf", kStart, SlotStatus::kSuccess);
  for (int k = 0; k < 4; ++k) w.scheduler.step(t0 + minutes(k));
  int before = calls(w);
  auto report = w.scheduler.step(t0 + minutes(4));
  CHECK(calls(w) == before);  // backing off
  CHECK(report.data_checks_deferred == 1);
  REQUIRE(w.scheduler.rerun("wf", kStart, t0 + minutes(4)));
  before = calls(w);
  report = w.scheduler.step(t0 + minutes(5));
  CHECK(calls(w) == before + 1);  // both slots, the waiting one at once: one listing of /in
  CHECK(report.data_checks == 2);
  w.scheduler.step(t0 + minutes(6));  // one step after a first miss
  CHECK(calls(w) == before + 2);
  w.scheduler.step(t0 + minutes(7));  // both back off
  CHECK(calls(w) == before + 2);
  w.scheduler.step(t0 + minutes(7), std::set<std::string>{"wf"});
  CHECK(calls(w) == before + 3);
}

TEST_CASE("checks where exists() is cheap, and without a back-off step, never back off") {
  World local;  // the in-memory file system does not prefer listing, as the local disk
  local.scheduler.set_data_check_backoff(every_minute());
  add_day_workflow(local, "wf", "file:///");
  World off;  // the default: no back-off
  off.data_fs->set_prefers_listing(true);
  add_day_workflow(off);
  for (int k = 0; k < 5; ++k) {
    local.scheduler.step(kEndOfDay + minutes(k));
    off.scheduler.step(kEndOfDay + minutes(k));
  }
  CHECK(local.data_fs->exists_calls() == 5 * 24);
  CHECK(off.data_fs->list_calls() == 5);
}
