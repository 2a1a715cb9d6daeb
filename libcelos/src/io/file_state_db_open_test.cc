#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "celos/state_db.h"
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
