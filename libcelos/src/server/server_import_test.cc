// --import-db's exit codes and what it prints (celos/server.h).
#include <sstream>

#include <catch2/catch.hpp>

#include "celos/server.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"
#include "testing/postgres_server.h"
#include "testing/temp_dir.h"

using namespace celos;

namespace {

struct Import {
  int code = -1;
  std::string out, err;
};

Import run(const std::string& dir, const std::string& uri, bool force = false) {
  ServerOptions opts;
  opts.import_db_dir = dir;
  opts.state_db = uri;
  opts.force = force;
  std::ostringstream out, err;
  Import result;
  result.code = import_db(opts, out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

const char* kUnreachable = "postgresql://celos:pw@127.0.0.1:1/celos";

}  // namespace

TEST_CASE("an import from a directory that does not exist is refused: exit 2") {
  testing::TempDir dir;
  const Import import = run(dir / "nope", kUnreachable);
  CHECK(import.code == 2);
  CHECK(import.out.empty());
  CHECK(import.err == "celos-server: import of " + (dir / "nope") +
                          " failed, nothing written: file database directory " + (dir / "nope") +
                          " does not exist\n");
}

TEST_CASE("an import of a corrupt file database fails: exit 1, naming the file") {
  testing::TempDir dir;
  testing::write_text_file(dir / "state/wf/2015-09-15/00:00:00.000Z", "{not json");
  const Import import = run(dir.path(), kUnreachable);
  CHECK(import.code == 1);
  CHECK(import.out.empty());
  CHECK_THAT(import.err, Catch::StartsWith("celos-server: import of " + dir.path() +
                                           " failed, nothing written: ") &&
                             Catch::Contains("state/wf/2015-09-15/00:00:00.000Z"));
}

TEST_CASE("an import says what it copied: exit 0, a second one is refused without --force") {
  std::string why_not;
  auto server = testing::PostgresServer::start(why_not);
  if (!server) {
    WARN("skipped: " << why_not);
    return;
  }
  const std::string uri = server->create_database("imported");
  testing::TempDir dir;
  testing::write_text_file(dir / "state/wf/2015-09-15/00:00:00.000Z",
                           R"({"status":"SUCCESS","externalID":"1-W","retryCount":0})");
  testing::write_text_file(dir / "paused/wf", "");
  const Import first = run(dir.path(), uri);
  CHECK(first.code == 0);
  CHECK(first.err.empty());
  CHECK(first.out ==
        "imported " + dir.path() + " into " + describe_postgres_uri(uri) +
            ": 1 slots, 0 rerun markers, 1 pause flags, 0 backfill plans, 0 history entries\n");
  const Import again = run(dir.path(), uri);
  CHECK(again.code == 2);
  CHECK(again.out.empty());
  CHECK(run(dir.path(), uri, true).code == 0);
}
