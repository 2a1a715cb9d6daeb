// The StateDatabase contract (testing/state_db_contract.cc) against every backend: the file
// database on disk and in memory, and PostgreSQL in a private cluster started for this binary.
#include "testing/state_db_contract.h"

#include <fstream>
#include <future>
#include <thread>

#include <catch2/catch.hpp>

#include "celos/backfill.h"
#include "celos/file_system.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"
#include "celos/write_fence.h"
#include "io/pg.h"
#include "testing/fakes.h"
#include "testing/postgres_server.h"
#include "testing/temp_dir.h"

using namespace celos;

namespace {

// One private cluster for the whole binary, started on first use; each test gets its own database.
testing::PostgresServer* postgres(std::string& why_not) {
  static std::string reason;
  static std::unique_ptr<testing::PostgresServer> server = testing::PostgresServer::start(reason);
  why_not = reason;
  return server.get();
}

std::string fresh_postgres_database(std::string& why_not) {
  static int counter = 0;
  testing::PostgresServer* server = postgres(why_not);
  if (!server) return "";
  return server->create_database("contract" + std::to_string(++counter));
}

}  // namespace

TEST_CASE("the file database on disk keeps the state database contract") {
  testing::TempDir dir;
  auto db = open_state_database("file:" + dir.path());
  REQUIRE(db);
  testing::check_state_database_contract(**db);
}

TEST_CASE("the file database in memory keeps the state database contract") {
  testing::MemFileSystem mem;
  auto db = make_file_state_database(std::shared_ptr<FileSystem>(&mem, [](FileSystem*) {}), "/db");
  testing::check_state_database_contract(*db);
}

TEST_CASE("PostgreSQL keeps the state database contract") {
  std::string why_not;
  const std::string uri = fresh_postgres_database(why_not);
  if (uri.empty()) {
    WARN("SKIPPED: " << why_not);
    return;
  }
  auto db = open_state_database(uri);
  REQUIRE(db);
  testing::check_state_database_contract(**db);
}

TEST_CASE("file URIs take file:/abs, file:rel and file:///abs") {
  CHECK(file_state_database_dir("file:/var/lib/celos") == "/var/lib/celos");
  CHECK(file_state_database_dir("file:db") == "db");
  CHECK(file_state_database_dir("file:///var/lib/celos") == "/var/lib/celos");
  CHECK_FALSE(file_state_database_dir("postgresql://h/db"));
  auto missing = open_state_database("file:/nonexistent/celos-db");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("/nonexistent/celos-db") != std::string::npos);
  auto scheme = open_state_database("mysql://h/db");
  REQUIRE_FALSE(scheme);
  CHECK(scheme.error().code == ErrorCode::kInvalid);
}

TEST_CASE("a malformed PostgreSQL URI is an invalid-argument error") {
  auto db = open_state_database("postgresql://celos:s3cr3t@[::1/celos");
  REQUIRE_FALSE(db);
  CHECK(db.error().code == ErrorCode::kInvalid);
  CHECK(db.error().message.find("s3cr3t") == std::string::npos);
}

TEST_CASE("refused credentials name host, port and database but never the password") {
  std::string why_not;
  const std::string uri = fresh_postgres_database(why_not);
  if (uri.empty()) {
    WARN("SKIPPED: " << why_not);
    return;
  }
  testing::PostgresServer* server = postgres(why_not);
  const std::string wrong =
      "postgresql://celos:wrong-secret-xyz@127.0.0.1:" + std::to_string(server->port()) +
      "/contract1";
  auto db = open_state_database(wrong);
  REQUIRE_FALSE(db);
  CHECK(db.error().code == ErrorCode::kInvalid);
  CHECK(db.error().message.find("127.0.0.1") != std::string::npos);
  CHECK(db.error().message.find(std::to_string(server->port())) != std::string::npos);
  CHECK(db.error().message.find("contract1") != std::string::npos);
  CHECK(db.error().message.find("wrong-secret-xyz") == std::string::npos);
}

TEST_CASE("an unreachable PostgreSQL server is a failure, or a database that connects later") {
  const std::string uri = "postgresql://celos@127.0.0.1:1/nowhere?connect_timeout=2";
  auto db = open_state_database(uri);
  REQUIRE_FALSE(db);
  CHECK(db.error().code == ErrorCode::kFailed);
  CHECK(db.error().message.find("host 127.0.0.1 port 1 database nowhere") != std::string::npos);
  StateDatabaseOptions later;
  later.connect_later = true;
  auto lazy = open_state_database(uri, later);
  REQUIRE(lazy);
  auto check = (*lazy)->check();
  REQUIRE_FALSE(check);
  CHECK(check.error().message.find("port 1") != std::string::npos);
}

TEST_CASE("a PostgreSQL schema newer than this celos is refused and left alone") {
  std::string why_not;
  const std::string uri = fresh_postgres_database(why_not);
  if (uri.empty()) {
    WARN("SKIPPED: " << why_not);
    return;
  }
  REQUIRE(open_state_database(uri));  // creates the schema
  const std::string name = uri.substr(uri.rfind('/') + 1);
  postgres(why_not)->sql(name, "INSERT INTO celos_schema (version) VALUES (999)");
  auto db = open_state_database(uri);
  REQUIRE_FALSE(db);
  CHECK(db.error().code == ErrorCode::kCorrupt);
  CHECK(db.error().message.find("schema version 999") != std::string::npos);
}

TEST_CASE("opening PostgreSQL twice migrates once") {
  std::string why_not;
  const std::string uri = fresh_postgres_database(why_not);
  if (uri.empty()) {
    WARN("SKIPPED: " << why_not);
    return;
  }
  auto first = open_state_database(uri);
  REQUIRE(first);
  REQUIRE((*first)->put_slots({SlotState::of({"wf", make_time(2015, 9, 15)}, SlotStatus::kReady)}));
  auto second = open_state_database(uri);
  REQUIRE(second);
  CHECK((*second)->get_slot({"wf", make_time(2015, 9, 15)})->has_value());
}

namespace {
// A file database as the original Celos left it, with a backfill plan of issue 29 (plans are
// copied with the slots that carry their id); returns the plan.
BackfillPlan write_original_database(const testing::TempDir& dir) {
  testing::write_text_file(dir / "state/wordcount-nyc/2015-09-15/00:00:00.000Z",
                           "{\n  \"status\" : \"SUCCESS\",\n  \"externalID\" : \"0008681-W\",\n"
                           "  \"retryCount\" : 0\n}");
  testing::write_text_file(dir / "state/wordcount-nyc/2015-09-15/01:00:00.000Z",
                           "{\n  \"status\" : \"READY\",\n  \"externalID\" : null,\n"
                           "  \"retryCount\" : 2\n}");
  testing::write_text_file(dir / "rerun/wordcount-nyc/2015-09-15/01:00:00.000Z", "");
  testing::write_text_file(dir / "paused/wordcount-lax", "");
  testing::write_text_file(dir / "datasets/raw-logs/2015-09-15/03:00:00.000Z",
                           "{\"announced\":\"2015-09-15T03:05:00.000Z\"}\n");
  BackfillPlan plan;
  plan.id = "bf-1";
  plan.workflows = {"wordcount-nyc"};
  plan.start = make_time(2015, 9, 1);
  plan.end = make_time(2015, 9, 15);
  plan.total = 336;
  plan.in_flight = {SlotId{"wordcount-nyc", make_time(2015, 9, 1)}};
  testing::write_text_file(dir / "backfills/bf-1", backfill_to_json(plan));
  return plan;
}
}  // namespace

TEST_CASE("a file database of the original Celos is imported into PostgreSQL in one go") {
  std::string why_not;
  const std::string uri = fresh_postgres_database(why_not);
  if (uri.empty()) {
    WARN("SKIPPED: " << why_not);
    return;
  }
  testing::TempDir dir;
  const BackfillPlan plan = write_original_database(dir);
  const Time now = Time{std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch())};
  auto report = import_file_database(dir.path(), uri, false, now);
  REQUIRE(report);
  CHECK(report->slots == 2);
  CHECK(report->reruns == 1);
  CHECK(report->paused == 1);
  CHECK(report->backfills == 1);
  auto db = open_state_database(uri);
  REQUIRE(db);
  CHECK(*(*db)->backfill_records() == std::vector<std::string>{backfill_to_json(plan)});
  auto slots = (*db)->get_slots("wordcount-nyc", make_time(2015, 9, 15), make_time(2015, 9, 16));
  REQUIRE(slots);
  REQUIRE(slots->size() == 2);
  CHECK(slots->at(0) == SlotState::of({"wordcount-nyc", make_time(2015, 9, 15)},
                                      SlotStatus::kSuccess, "0008681-W"));
  CHECK(slots->at(1).retry_count == 2);
  CHECK(*(*db)->rerun_times("wordcount-nyc", now) == std::vector<Time>{make_time(2015, 9, 15, 1)});
  CHECK(*(*db)->is_paused("wordcount-lax"));
  CHECK(*(*db)->announced_instances("raw-logs", make_time(2015, 9, 15), make_time(2015, 9, 16)) ==
        std::vector<Time>{make_time(2015, 9, 15, 3)});

  SECTION("a second import into the non-empty target is refused; --force replaces it") {
    testing::write_text_file(dir / "state/other/2015-09-15/00:00:00.000Z",
                             "{\"status\":\"FAILURE\",\"externalID\":null,\"retryCount\":0}");
    auto again = import_file_database(dir.path(), uri, false, now);
    REQUIRE_FALSE(again);
    CHECK(again.error().message.find("not empty") != std::string::npos);
    REQUIRE(import_file_database(dir.path(), uri, true, now));
    CHECK((*db)->get_slot({"other", make_time(2015, 9, 15)})->has_value());
  }
  SECTION("a backfill plan file that is not a plan is named and nothing is written") {
    testing::write_text_file(dir / "backfills/bf-2", "{\"id\": 3}");
    auto broken = import_file_database(dir.path(), uri, true, now);
    REQUIRE_FALSE(broken);
    CHECK(broken.error().code == ErrorCode::kCorrupt);
    CHECK(broken.error().message.find("backfills/bf-2") != std::string::npos);
    CHECK((*db)->backfill_records()->size() == 1);
  }
  SECTION("a corrupt file is named and nothing is written") {
    testing::write_text_file(dir / "state/broken/2015-09-15/02:00:00.000Z", "{not json");
    auto broken = import_file_database(dir.path(), uri, true, now);
    REQUIRE_FALSE(broken);
    CHECK(broken.error().code == ErrorCode::kCorrupt);
    CHECK(broken.error().message.find("state/broken/2015-09-15/02:00:00.000Z") !=
          std::string::npos);
    CHECK(
        (*db)->get_slots("wordcount-nyc", make_time(2015, 9, 15), make_time(2015, 9, 16))->size() ==
        2);
  }
}

TEST_CASE("the import copies the slot history in append order and the maintenance mode") {
  std::string why_not;
  const std::string uri = fresh_postgres_database(why_not);
  if (uri.empty()) {
    WARN("SKIPPED: " << why_not);
    return;
  }
  testing::TempDir dir;
  auto file = make_file_state_database(make_local_file_system(), dir.path());
  const SlotId slot{"wordcount", make_time(2015, 9, 15, 1)};
  const SlotHistoryEntry ready{make_time(2015, 9, 15, 1, 5), std::nullopt,
                               SlotState::of(slot, SlotStatus::kReady), "step"};
  const SlotHistoryEntry running{make_time(2015, 9, 15, 1, 6), SlotStatus::kReady,
                                 SlotState::of(slot, SlotStatus::kRunning, "job-1"),
                                 "api:ops@10.0.0.1"};
  REQUIRE(file->append_history({ready}));
  REQUIRE(file->append_history({running}));
  // A line torn by a crash is skipped, as the file backend's readers skip it.
  {
    std::ofstream torn(dir / "history/wordcount/2015-09-15.jsonl", std::ios::app);
    torn << "{\"at\":\"2015-09-15T01:0";
  }
  Maintenance drain;
  drain.mode = MaintenanceMode::kDrain;
  drain.reason = "upgrade";
  drain.since = make_time(2015, 9, 15, 2);
  REQUIRE(file->set_maintenance(drain));
  file.reset();
  const Time now = make_time(2015, 9, 16);
  auto report = import_file_database(dir.path(), uri, false, now);
  REQUIRE(report);
  CHECK(report->history == 2);
  auto db = open_state_database(uri);
  REQUIRE(db);
  auto history = (*db)->slot_history(slot);
  REQUIRE(history);
  CHECK(*history == std::vector<SlotHistoryEntry>{ready, running});
  auto mode = (*db)->maintenance();
  REQUIRE(mode);
  CHECK(mode->mode == MaintenanceMode::kDrain);
  CHECK(mode->reason == "upgrade");
  CHECK(mode->since == make_time(2015, 9, 15, 2));
}

TEST_CASE("a PostgreSQL leader's prefetched state lasts only as long as its epoch") {
  std::string why_not;
  const std::string uri = fresh_postgres_database(why_not);
  if (uri.empty()) {
    WARN("SKIPPED: " << why_not);
    return;
  }
  const std::string name = uri.substr(uri.rfind('/') + 1);
  const SlotId id{"wf", make_time(2015, 9, 15, 1)};
  auto fence = std::make_shared<WriteFence>();
  StateDatabaseOptions fenced;
  fenced.fence = fence;
  auto leader = open_state_database(uri, fenced);
  REQUIRE(leader);
  auto other = open_state_database(uri);  // stands for the next leader
  REQUIRE(other);
  postgres(why_not)->sql(name,
                         "INSERT INTO celos_lease (cluster, holder, url, epoch, expires) "
                         "VALUES ('c', 'n1', 'u', 1, now() + interval '1 hour')");
  fence->set(WriteFence::Holder{"c", "n1", 1});
  REQUIRE((*leader)->put_slots({SlotState::of(id, SlotStatus::kRunning, "job")}));
  REQUIRE((*leader)->prefetch({"wf"}, make_time(2015, 9, 15)));
  REQUIRE((*other)->put_slots({SlotState::of(id, SlotStatus::kSuccess, "job")}));
  // Only the leader writes in a real cluster: within its epoch it answers from memory.
  CHECK((*leader)->get_slot(id).value()->status == SlotStatus::kRunning);

  SECTION("a standby reads the database") {
    fence->set(std::nullopt);
    CHECK((*leader)->get_slot(id).value()->status == SlotStatus::kSuccess);
  }
  SECTION("a new epoch starts from the database") {
    postgres(why_not)->sql(name, "UPDATE celos_lease SET epoch = 2");
    fence->set(WriteFence::Holder{"c", "n1", 2});
    REQUIRE((*leader)->prefetch({"wf"}, make_time(2015, 9, 15)));
    CHECK((*leader)->get_slot(id).value()->status == SlotStatus::kSuccess);
  }
  SECTION("a refused write empties it") {
    postgres(why_not)->sql(name, "UPDATE celos_lease SET epoch = 3");
    CHECK_FALSE((*leader)->put_slots({SlotState::of(id, SlotStatus::kFailure, "job")}));
    CHECK((*leader)->get_slot(id).value()->status == SlotStatus::kSuccess);
  }
}

TEST_CASE("a PostgreSQL prefetch of more than a thousand workflows holds them all") {
  std::string why_not;
  const std::string uri = fresh_postgres_database(why_not);
  if (uri.empty()) {
    WARN("SKIPPED: " << why_not);
    return;
  }
  const Time t = make_time(2015, 9, 15, 1);
  std::vector<SlotState> states;
  std::vector<std::string> ids;
  for (int w = 0; w < 1001; ++w) {
    ids.push_back("wf-" + std::to_string(w));
    states.push_back(SlotState::of({ids.back(), t}, SlotStatus::kRunning, "job"));
  }
  auto writer = open_state_database(uri);
  REQUIRE(writer);
  REQUIRE((*writer)->put_slots(states));
  auto reader = open_state_database(uri);  // unfenced: the only writer, as far as it knows
  REQUIRE(reader);
  REQUIRE((*reader)->prefetch(ids, make_time(2015, 9, 15)));
  // Changed behind its back: what it answers now comes from memory, in both queries' halves.
  REQUIRE((*writer)->put_slots({SlotState::of({"wf-0", t}, SlotStatus::kSuccess, "job"),
                                SlotState::of({"wf-1000", t}, SlotStatus::kSuccess, "job")}));
  CHECK((*reader)->get_slot({"wf-0", t}).value()->status == SlotStatus::kRunning);
  CHECK((*reader)->get_slot({"wf-1000", t}).value()->status == SlotStatus::kRunning);
  CHECK((*writer)->get_slot({"wf-1000", t}).value()->status == SlotStatus::kSuccess);
}

// Issue 33: the lease check of a fenced write is atomic with its COMMIT, yet holds no lock while
// the write runs. Here a takeover is in flight (the lease row locked, not committed) when the
// leader commits: the leader's check waits for it and is refused once it commits, or goes
// through when it rolls back.
TEST_CASE("a fenced PostgreSQL write is refused by a takeover that commits while it commits") {
  std::string why_not;
  const std::string uri = fresh_postgres_database(why_not);
  if (uri.empty()) {
    WARN("SKIPPED: " << why_not);
    return;
  }
  const std::string name = uri.substr(uri.rfind('/') + 1);
  auto fence = std::make_shared<WriteFence>();
  StateDatabaseOptions fenced;
  fenced.fence = fence;
  fenced.session_lease = std::chrono::seconds(10);
  auto leader = open_state_database(uri, fenced);
  REQUIRE(leader);
  postgres(why_not)->sql(name,
                         "INSERT INTO celos_lease (cluster, holder, url, epoch, expires) "
                         "VALUES ('c', 'n1', 'u', 1, now() + interval '1 hour')");
  fence->set(WriteFence::Holder{"c", "n1", 1});
  const SlotId id{"wf", make_time(2015, 9, 15, 1)};
  REQUIRE((*leader)->put_slots({SlotState::of(id, SlotStatus::kReady)}));

  auto takeover = pg::connect(uri);
  REQUIRE(takeover);
  auto monitor = pg::connect(uri);
  REQUIRE(monitor);
  REQUIRE(pg::exec(takeover->get(), "BEGIN"));
  REQUIRE(pg::exec(takeover->get(), "UPDATE celos_lease SET holder = 'n2', epoch = 2"));
  auto write = std::async(std::launch::async, [&] {
    return (*leader)->put_slots({SlotState::of(id, SlotStatus::kRunning, "job")});
  });
  // Bounded: the leader's commit waits for the takeover's row lock.
  bool waiting = false;
  for (int i = 0; i < 300 && !waiting; ++i) {
    auto r = pg::exec(monitor->get(),
                      "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                      "AND query LIKE '%celos_lease%'");
    REQUIRE(r);
    waiting = pg::field(r->get(), 0, 0) == std::optional<std::string>("1");
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(waiting);
  SECTION("the takeover commits: the write is refused and nothing of it is stored") {
    REQUIRE(pg::exec(takeover->get(), "COMMIT"));
    auto written = write.get();
    REQUIRE_FALSE(written);
    CHECK(written.error().message.find("lost the cluster lease (epoch 1)") != std::string::npos);
    auto reader = open_state_database(uri);
    REQUIRE(reader);
    CHECK((*reader)->get_slot(id).value()->status == SlotStatus::kReady);
  }
  SECTION("the takeover rolls back: the write goes through") {
    REQUIRE(pg::exec(takeover->get(), "ROLLBACK"));
    REQUIRE(write.get());
    auto reader = open_state_database(uri);
    REQUIRE(reader);
    CHECK((*reader)->get_slot(id).value()->status == SlotStatus::kRunning);
  }
}

TEST_CASE("a cluster node's PostgreSQL sessions are bounded by its lease") {
  std::string why_not;
  const std::string uri = fresh_postgres_database(why_not);
  if (uri.empty()) {
    WARN("SKIPPED: " << why_not);
    return;
  }
  auto c = pg::connect(uri, pg::SessionLimits{std::chrono::seconds(10)});
  REQUIRE(c);
  auto show = [&](const char* setting) {
    auto r = pg::exec(c->get(), std::string("SHOW ") + setting);
    REQUIRE(r);
    return pg::field(r->get(), 0, 0).value_or("");
  };
  CHECK(show("idle_in_transaction_session_timeout") == "5s");
  CHECK(show("lock_timeout") == "10s");
  CHECK(show("tcp_user_timeout") == "10000");  // milliseconds, shown without a unit
  CHECK(show("TimeZone") == "UTC");
  CHECK(std::string(PQparameterStatus(c->get(), "application_name")) == "celos");
  auto unbounded = pg::connect(uri);  // --import-db: one long transaction
  REQUIRE(unbounded);
  auto r = pg::exec(unbounded->get(), "SHOW idle_in_transaction_session_timeout");
  REQUIRE(r);
  CHECK(pg::field(r->get(), 0, 0) == std::optional<std::string>("0"));
}
