// celos/dir_watch.h on the real local file system.
#include "celos/dir_watch.h"

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>

#include <catch2/catch.hpp>

#include "testing/temp_dir.h"

using namespace celos;
using namespace std::chrono_literals;
using celos::testing::write_text_file;

namespace {

struct Seen {
  std::mutex mutex;
  std::condition_variable changed;
  std::set<std::string> files;

  bool wait_for(const std::string& file) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, 30s, [&] { return files.count(file) > 0; });
  }
};

}  // namespace

TEST_CASE("a file written or moved into a watched directory is seen, others are not") {
  celos::testing::TempDir tmp;
  const std::string dir = tmp / "watched";
  write_text_file(tmp / "other/x", "x");
  Seen seen;
  auto watch = open_directory_watch({.on_file =
                                         [&](const std::string& in, const std::string& name) {
                                           std::lock_guard lock(seen.mutex);
                                           seen.files.insert(in + "/" + name);
                                           seen.changed.notify_all();
                                         },
                                     .on_overflow = {}});
  REQUIRE(watch);
  write_text_file(tmp / "watched/.keep", "");
  REQUIRE((*watch)->add(dir));
  CHECK((*watch)->size() == 1);
  write_text_file(tmp / "other/y", "y");
  write_text_file(tmp / "other/moved", "m");
  std::filesystem::rename(tmp / "other/moved", tmp / "watched/moved");
  write_text_file(tmp / "watched/written", "w");
  CHECK(seen.wait_for(dir + "/moved"));
  CHECK(seen.wait_for(dir + "/written"));
  std::lock_guard lock(seen.mutex);
  CHECK(seen.files.size() == 2);
}

TEST_CASE("watching a missing directory is an error naming it") {
  auto watch = open_directory_watch({});
  REQUIRE(watch);
  auto added = (*watch)->add("/no/such/celos/dir");
  REQUIRE_FALSE(added);
  CHECK_THAT(added.error().message, Catch::Contains("/no/such/celos/dir"));
}
