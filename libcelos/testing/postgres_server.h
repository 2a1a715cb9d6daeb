// A private PostgreSQL cluster for tests: initdb into a temporary directory (as the unprivileged
// user `celos-test` when the tests run as root, since initdb refuses root), listening on
// 127.0.0.1 only on a free port, its unix socket inside the temporary directory. Stopped and
// removed when the object dies.
//
// CELOS_TEST_POSTGRES_BIN overrides the binaries' directory (default /usr/lib/postgresql/15/bin).
#pragma once

#include <memory>
#include <string>

namespace celos::testing {

class PostgresServer {
 public:
  // Starts a cluster, or returns nullptr and sets `why_not` when the PostgreSQL binaries are not
  // installed. Throws std::runtime_error when they are installed but the cluster does not start.
  static std::unique_ptr<PostgresServer> start(std::string& why_not);
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  int port() const { return port_; }
  // Creates an empty database and returns its URI
  // (postgresql://celos:<password>@127.0.0.1:<port>/<name>).
  std::string create_database(const std::string& name);
  // Runs SQL in a database through psql (throws on failure).
  void sql(const std::string& database, const std::string& statement) const;
  // The URI of a database without the password (for tests of credentials).
  std::string uri_without_password(const std::string& name) const;
  static constexpr const char* kPassword = "celos-test-secret";

 private:
  PostgresServer() = default;
  void run(const std::string& command) const;  // throws with the log's tail on failure

  std::string dir_, bin_, user_;
  int port_ = 0;
};

}  // namespace celos::testing
