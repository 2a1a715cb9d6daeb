// --import-db of the announced dataset instances (celos/state_db_open.h): the day files of
// io/file_db/file_announcements.h beside the per-instance files of earlier versions.
#include <memory>

#include <catch2/catch.hpp>

#include "celos/file_system.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"
#include "io/pg.h"
#include "testing/postgres_server.h"
#include "testing/temp_dir.h"

using namespace celos;
using std::chrono::hours;
using std::chrono::minutes;

namespace {

const Time kImportDay = make_time(2015, 9, 15);

std::string day_line(Time time, Time announced) {
  return "{\"time\":\"" + format_time(time) + "\",\"announced\":\"" + format_time(announced) +
         "\"}";
}

// The rows of celos_announced as "dataset instance-time announced-time", ordered.
std::string announced_rows(const std::string& uri) {
  auto c = pg::connect(uri);
  REQUIRE(c);
  auto r = pg::exec(c->get(),
                    "SELECT string_agg(dataset || ' ' || to_char(instance_time AT TIME ZONE 'UTC', "
                    "'DD HH24:MI') || ' ' || to_char(announced AT TIME ZONE 'UTC', 'DD HH24:MI'), "
                    "', ' ORDER BY dataset, instance_time) FROM celos_announced");
  REQUIRE(r);
  return pg::field(r->get(), 0, 0).value_or("");
}

// The private cluster of this binary, started on first use; nullptr (and a warning) where
// PostgreSQL is not installed.
testing::PostgresServer* cluster() {
  static std::string why_not;
  static const std::unique_ptr<testing::PostgresServer> server =
      testing::PostgresServer::start(why_not);
  if (!server) WARN("SKIPPED: " << why_not);
  return server.get();
}

}  // namespace

TEST_CASE("the import copies the announcement day files with the old files, earliest stamp kept") {
  testing::PostgresServer* server = cluster();
  if (!server) return;
  const std::string uri = server->create_database("announced");
  testing::TempDir dir;
  const Time t3 = kImportDay + hours(3), t4 = kImportDay + hours(4), t5 = kImportDay + hours(5);
  // 03:00 in both layouts: the day file's stamp is the earlier one.
  testing::write_text_file(dir / "datasets/raw-logs/2015-09-15/03:00:00.000Z",
                           "{\"announced\":\"2015-09-15T03:05:00.000Z\"}\n");
  // 04:00 twice (the earlier stamp stays), a corrupt line in the middle, a torn last line.
  testing::write_text_file(
      dir / "datasets/raw-logs/2015-09-15.jsonl",
      "\n" + day_line(t3, t3 + minutes(1)) + "\n\n" + day_line(t4, t4 + minutes(9)) + "\n" +
          day_line(t4, t4 + minutes(2)) + "\n{\"time\":3}\n" + day_line(t5, t5 + minutes(1)) +
          "\n\n{\"time\":\"2015-09-15T06:00:00.000Z\",\"annou");
  // And one written by the file backend itself.
  auto file = make_file_state_database(make_local_file_system(), dir.path());
  REQUIRE(file->announce_instance("clicks", kImportDay + hours(25), kImportDay + hours(26)));
  file.reset();

  REQUIRE(import_file_database(dir.path(), uri, false, kImportDay + hours(48)));
  CHECK(announced_rows(uri) ==
        "clicks 16 01:00 16 02:00, raw-logs 15 03:00 15 03:01, raw-logs 15 04:00 15 04:02, "
        "raw-logs 15 05:00 15 05:01");
  auto db = open_state_database(uri);
  REQUIRE(db);
  CHECK(*(*db)->announced_instances("raw-logs", kImportDay, kImportDay + hours(24)) ==
        std::vector<Time>{t3, t4, t5});

  SECTION("a corrupt file of one instance stops the import, naming it") {
    testing::write_text_file(dir / "datasets/raw-logs/2015-09-15/07:00:00.000Z", "{\"at\":1}");
    auto broken = import_file_database(dir.path(), uri, true, kImportDay + hours(48));
    REQUIRE_FALSE(broken);
    CHECK(broken.error().code == ErrorCode::kCorrupt);
    CHECK(broken.error().message.find("raw-logs/2015-09-15/07:00:00.000Z") != std::string::npos);
  }
}
