// The PostgreSQL cluster's lease confirmation (cluster/lease_confirmation.h) against a private
// PostgreSQL: it holds only while the lease row names this node and epoch with time to spare.
#include "cluster/lease_confirmation.h"

#include <catch2/catch.hpp>

#include "celos/clock.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"
#include "celos/write_fence.h"
#include "testing/postgres_server.h"

using namespace celos;
using std::chrono::milliseconds;

namespace {

struct Lease {
  std::unique_ptr<testing::PostgresServer> server;
  std::string uri;
  void sql(const std::string& statement) { server->sql("lease", statement); }
};

}  // namespace

TEST_CASE("a lease confirmation holds only for the holder and epoch with time to spare") {
  std::string why_not;
  Lease lease{testing::PostgresServer::start(why_not), ""};
  if (!lease.server) {
    WARN("SKIPPED: " << why_not);
    return;
  }
  lease.uri = lease.server->create_database("lease");
  REQUIRE(open_state_database(lease.uri));  // the schema
  pg::Pool pool(lease.uri);
  auto fence = std::make_shared<WriteFence>();
  auto confirm = [&] { return LeaseConfirmation(pool, fence, milliseconds(2000)).confirm(); };

  CHECK_FALSE(confirm());  // no lease held
  lease.sql(
      "INSERT INTO celos_lease VALUES ('c', 'n1', 'http://n1', 7, now(), "
      "now() + interval '60 seconds')");
  fence->set(WriteFence::Holder{"c", "n1", 7});
  REQUIRE(confirm());

  lease.sql("UPDATE celos_lease SET expires = now() + interval '1 second'");  // within the margin
  auto short_lease = confirm();
  REQUIRE_FALSE(short_lease);
  CHECK(short_lease.error().code == ErrorCode::kUnavailable);
  CHECK_THAT(short_lease.error().message, Catch::Contains("n1") && Catch::Contains("epoch 7"));

  lease.sql("UPDATE celos_lease SET holder = 'n2', epoch = 8, expires = now() + interval '60 s'");
  CHECK_FALSE(confirm());  // another node leads
  fence->set(WriteFence::Holder{"c", "n2", 8});
  CHECK(confirm());
}

TEST_CASE("a reused lease confirmation asks again once its short reuse is over") {
  std::string why_not;
  Lease lease{testing::PostgresServer::start(why_not), ""};
  if (!lease.server) {
    WARN("SKIPPED: " << why_not);
    return;
  }
  lease.uri = lease.server->create_database("lease");
  REQUIRE(open_state_database(lease.uri));
  pg::Pool pool(lease.uri);
  auto fence = std::make_shared<WriteFence>();
  lease.sql(
      "INSERT INTO celos_lease VALUES ('c', 'n1', 'http://n1', 7, now(), "
      "now() + interval '60 seconds')");
  fence->set(WriteFence::Holder{"c", "n1", 7});
  ManualClock clock;
  LeaseConfirmation confirmation(pool, fence, milliseconds(2000), clock);
  REQUIRE(confirmation.confirm());
  lease.sql("UPDATE celos_lease SET holder = 'n2', epoch = 8");
  // Reused for LeaseConfirmation::kReuse (1 s) on its clock, not asked again before.
  clock.advance(LeaseConfirmation::kReuse - milliseconds(1));
  CHECK(confirmation.confirm());
  clock.advance(milliseconds(1));
  CHECK_FALSE(confirmation.confirm());
}
