#include "testing/postgres_server.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include "testing/free_port.h"
#include "testing/temp_dir.h"

namespace celos::testing {
namespace {

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// root may not run initdb: the tests' unprivileged user (scripts/setup.sh creates it).
std::string unprivileged_user() {
  if (::geteuid() != 0) return "";
  if (::getpwnam("celos-test") == nullptr &&
      std::system("useradd --system --no-create-home --shell /usr/sbin/nologin celos-test") != 0) {
    throw std::runtime_error("cannot create the user celos-test for PostgreSQL");
  }
  return "celos-test";
}

}  // namespace

std::unique_ptr<PostgresServer> PostgresServer::start(std::string& why_not) {
  const char* bin_env = std::getenv("CELOS_TEST_POSTGRES_BIN");
  const std::string bin = bin_env && *bin_env ? bin_env : "/usr/lib/postgresql/15/bin";
  if (!std::filesystem::exists(bin + "/initdb") || !std::filesystem::exists(bin + "/pg_ctl")) {
    why_not = "PostgreSQL binaries not found in " + bin + " (install postgresql: scripts/setup.sh)";
    return nullptr;
  }
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  server->bin_ = bin;
  server->user_ = unprivileged_user();
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/celos-pg-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  server->dir_ = tmpl;
  write_text_file(tmpl + "/pw", kPassword);
  write_text_file(tmpl + "/setup.log", "");
  if (!server->user_.empty()) {
    const passwd* pw = ::getpwnam(server->user_.c_str());
    for (const std::string& p : {tmpl, tmpl + "/pw", tmpl + "/setup.log"}) {
      if (::chown(p.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
        throw std::runtime_error("cannot chown " + p + " to " + server->user_);
      }
    }
  }
  server->run(
      fmt::format("{}/initdb -D {}/data -U celos --auth-local=trust "
                  "--auth-host=scram-sha-256 --pwfile={}/pw -E UTF8 --no-sync",
                  bin, quote(tmpl), quote(tmpl)));
  for (int attempt = 0;; ++attempt) {
    server->port_ = free_port();
    try {
      server->run(fmt::format(
          "{}/pg_ctl -D {}/data -l {}/log -w -t 60 -o {} start", bin, quote(tmpl), quote(tmpl),
          quote(fmt::format("-c listen_addresses=127.0.0.1 -p {} -c unix_socket_directories={} "
                            "-c fsync=off -c synchronous_commit=off -c max_connections=200",
                            server->port_, tmpl))));
      return server;
    } catch (const std::runtime_error&) {
      if (attempt == 2) throw;  // the port was taken meanwhile: try another one
    }
  }
}

PostgresServer::~PostgresServer() {
  if (port_ != 0) {
    std::string cmd =
        fmt::format("{}/pg_ctl -D {}/data -m immediate -w stop >/dev/null 2>&1", bin_, quote(dir_));
    if (!user_.empty()) cmd = "runuser -u " + user_ + " -- sh -c " + quote(cmd);
    (void)std::system(cmd.c_str());
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void PostgresServer::run(const std::string& command) const {
  std::string cmd = command + " >>" + quote(dir_ + "/setup.log") + " 2>&1";
  if (!user_.empty()) {
    cmd = "runuser -u " + user_ + " -- sh -c " + quote(cmd);
  }
  if (std::system(cmd.c_str()) != 0) {
    std::string log;
    try {
      log = read_text_file(dir_ + "/setup.log");
      if (std::filesystem::exists(dir_ + "/log")) log += read_text_file(dir_ + "/log");
    } catch (const std::exception&) {
    }
    throw std::runtime_error("PostgreSQL test cluster: `" + command + "` failed:\n" + log);
  }
}

std::string PostgresServer::create_database(const std::string& name) {
  run(fmt::format("{}/createdb -h {} -p {} -U celos {}", bin_, quote(dir_), port_, quote(name)));
  return fmt::format("postgresql://celos:{}@127.0.0.1:{}/{}", kPassword, port_, name);
}

void PostgresServer::sql(const std::string& database, const std::string& statement) const {
  run(fmt::format("{}/psql -v ON_ERROR_STOP=1 -q -h {} -p {} -U celos -d {} -c {}", bin_,
                  quote(dir_), port_, quote(database), quote(statement)));
}

std::string PostgresServer::uri_without_password(const std::string& name) const {
  return fmt::format("postgresql://celos@127.0.0.1:{}/{}", port_, name);
}

}  // namespace celos::testing
