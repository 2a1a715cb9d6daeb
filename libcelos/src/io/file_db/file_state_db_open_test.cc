#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "celos/file_system.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"
#include "testing/temp_dir.h"

using namespace celos;

TEST_CASE("open_file_state_database: a second opener of the directory is refused with the pid") {
  testing::TempDir dir;
  auto first = open_file_state_database(make_local_file_system(), dir.path());
  REQUIRE(first);
  CHECK(testing::read_text_file(dir / ".lock") == std::to_string(::getpid()) + "\n");

  auto second = open_file_state_database(make_local_file_system(), dir.path() + "/");
  REQUIRE_FALSE(second);
  CHECK_THAT(second.error().message, Catch::Contains(dir.path()));
  CHECK_THAT(second.error().message, Catch::Contains("pid " + std::to_string(::getpid())));

  first->reset();  // closing the database releases the lock
  CHECK(open_file_state_database(make_local_file_system(), dir.path()));
}

TEST_CASE("open_file_state_database: a missing directory is an error naming it") {
  testing::TempDir dir;
  auto db = open_file_state_database(make_local_file_system(), dir / "missing");
  REQUIRE_FALSE(db);
  CHECK_THAT(db.error().message, Catch::Contains(dir / "missing"));
}

TEST_CASE("open_file_state_database: stale temporaries of crashed writes are removed") {
  testing::TempDir dir;
  const std::string day = dir / "state/wf/2015-09-13";
  testing::write_text_file(day + "/01:00:00.000Z", "{\"status\":\"SUCCESS\"}");
  testing::write_text_file(day + "/.01:00:00.000Z.tmp-123-4", "{\"stat");
  testing::write_text_file(day + "/.02:00:00.000Z.tmp-123-5", "");
  testing::write_text_file(dir / "rerun/wf/2015-09-13/.01:00:00.000Z.tmp-9-9", "");
  testing::write_text_file(dir / "paused/.wf.tmp-9-10", "");
  testing::write_text_file(dir / "jobs/wf/2015-09-13/01:00:00.000Z/cmd-1/.x.tmp-1-1", "kept");
  CHECK(remove_stale_temporaries(dir.path()) == 4);
  namespace fs = std::filesystem;
  CHECK(fs::exists(day + "/01:00:00.000Z"));
  CHECK_FALSE(fs::exists(day + "/.01:00:00.000Z.tmp-123-4"));
  CHECK_FALSE(fs::exists(dir / "paused/.wf.tmp-9-10"));
  CHECK(fs::exists(dir / "jobs/wf/2015-09-13/01:00:00.000Z/cmd-1/.x.tmp-1-1"));

  testing::write_text_file(day + "/.03:00:00.000Z.tmp-1-1", "");
  auto db = open_file_state_database(make_local_file_system(), dir.path());
  REQUIRE(db);
  CHECK_FALSE(fs::exists(day + "/.03:00:00.000Z.tmp-1-1"));
  auto slot = (*db)->get_slot({"wf", make_time(2015, 9, 13, 1)});
  REQUIRE(slot);
  CHECK(slot->has_value());
}

TEST_CASE(
    "file state database check: a directory replaced underneath is not ready, and is again "
    "once it is back") {
  namespace fs = std::filesystem;
  testing::TempDir parent;
  const std::string root = parent / "db";
  fs::create_directory(root);
  auto db = open_file_state_database(make_local_file_system(), root);
  REQUIRE(db);
  REQUIRE((*db)->check());

  fs::rename(root, parent / "db.old");
  fs::create_directory(root);  // an empty directory of the same name, no lock in it
  auto replaced = (*db)->check();
  REQUIRE_FALSE(replaced);
  CHECK_THAT(replaced.error().message, Catch::Contains(root) && Catch::Contains("replaced"));

  fs::remove(root);
  auto missing = (*db)->check();
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error().message, Catch::Contains("No such file or directory"));

  testing::write_text_file(root, "not a directory");
  auto file = (*db)->check();
  REQUIRE_FALSE(file);
  CHECK_THAT(file.error().message, Catch::Contains("no longer a directory"));

  fs::remove(root);
  fs::rename(parent / "db.old", root);
  CHECK((*db)->check());
}

TEST_CASE("file state database check: a removed lock file is not ready") {
  testing::TempDir dir;
  auto db = open_file_state_database(make_local_file_system(), dir.path());
  REQUIRE(db);
  std::filesystem::remove(dir / ".lock");
  auto check = (*db)->check();
  REQUIRE_FALSE(check);
  CHECK_THAT(check.error().message, Catch::Contains(dir / ".lock"));
}

TEST_CASE("file state database check: the probe leaves no file behind") {
  testing::TempDir dir;
  auto db = open_file_state_database(make_local_file_system(), dir.path());
  REQUIRE(db);
  REQUIRE((*db)->check());
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    CHECK(entry.path().filename() == ".lock");
  }
}
