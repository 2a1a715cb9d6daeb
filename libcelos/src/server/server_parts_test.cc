// celos-server's parts where they decide something: the Hadoop configuration and the state
// database at start-up, the tokens file, the serving deadlines from --io-timeout.
#include "server/server_parts.h"

#include <filesystem>

#include <catch2/catch.hpp>

#include "celos/state_db_open.h"
#include "testing/temp_dir.h"

using namespace celos;

namespace {

ServerOptions file_options(const testing::TempDir& dir) {
  ServerOptions opts;
  opts.host = "127.0.0.1";
  opts.port = 0;
  opts.workflows_dir = dir / "workflows";
  opts.defaults_dir = dir / "defaults";
  opts.logs_dir = dir / "logs";
  opts.db_dir = dir / "db";
  opts.hadoop_conf_dir = dir / "hadoop";
  std::filesystem::create_directories(opts.db_dir);
  return opts;
}

const char* kCoreSite = R"(<configuration><property><name>fs.defaultFS</name>
<value>{}</value></property></configuration>)";

void write_core_site(const testing::TempDir& dir, const std::string& default_fs) {
  std::string xml = kCoreSite;
  xml.replace(xml.find("{}"), 2, default_fs);
  testing::write_text_file(dir / "hadoop/core-site.xml", xml);
}

}  // namespace

TEST_CASE("the backends: a file database, the default file system as the metrics name it") {
  testing::TempDir dir;
  ServerOptions opts = file_options(dir);
  opts.io_timeout_seconds = 2.5;
  write_core_site(dir, "file:///");
  auto backends = open_backends(opts);
  INFO((backends ? "" : backends.error().message));
  REQUIRE(backends);
  CHECK(backends->io_timeout == std::chrono::milliseconds(2500));
  CHECK(backends->default_fs == "file");
  CHECK(backends->db);
  CHECK(backends->source);
  backends->db.reset();  // (unlocks the directory)
  write_core_site(dir, "hdfs://nn.example:8020");
  auto hdfs = open_backends(opts);
  REQUIRE(hdfs);
  CHECK(hdfs->default_fs == "webhdfs");
}

TEST_CASE("a Hadoop configuration that does not parse is a refused start-up") {
  testing::TempDir dir;
  testing::write_text_file(dir / "hadoop/core-site.xml", "<configuration><property>");
  auto backends = open_backends(file_options(dir));
  REQUIRE_FALSE(backends);
  CHECK(backends.error().code == ErrorCode::kInvalid);
  CHECK_THAT(backends.error().message, Catch::Contains("core-site.xml"));
}

TEST_CASE("a second server on the same file database fails (exit 1), naming the directory") {
  testing::TempDir dir;
  auto first = open_backends(file_options(dir));
  REQUIRE(first);
  auto second = open_backends(file_options(dir));
  REQUIRE_FALSE(second);
  CHECK(second.error().code != ErrorCode::kInvalid);
  CHECK_THAT(second.error().message, Catch::Contains(dir / "db"));
}

TEST_CASE("the tokens file: none without the flag, a missing one refused") {
  testing::TempDir dir;
  ServerOptions opts = file_options(dir);
  auto none = open_tokens(opts);
  REQUIRE(none);
  CHECK(*none == nullptr);
  opts.auth_tokens = dir / "tokens";
  auto missing = open_tokens(opts);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kInvalid);
  CHECK_THAT(missing.error().message, Catch::Contains(dir / "tokens"));
}

TEST_CASE("serving deadlines follow --io-timeout, at least one second each") {
  testing::TempDir dir;
  ServerOptions opts = file_options(dir);
  Serving slow(opts, std::chrono::seconds(30));
  CHECK(slow.reading().read_timeout == std::chrono::seconds(10));
  CHECK(slow.reading().mutation_wait == std::chrono::seconds(15));
  CHECK(slow.reading().database == "the state database (" + (dir / "db") + ")");
  CHECK(slow.forwarding(10).timeout == std::chrono::seconds(30));
  CHECK(slow.forwarding(10).retry_after_seconds == 2);
  Serving fast(opts, std::chrono::milliseconds(600));
  CHECK(fast.reading().read_timeout == std::chrono::seconds(1));
  CHECK(fast.reading().mutation_wait == std::chrono::seconds(1));
  CHECK(fast.forwarding(3).retry_after_seconds == 1);
  opts.state_db = "postgresql://celos:secret@db.example:5433/celos";
  CHECK(Serving(opts, std::chrono::seconds(1)).reading().database ==
        "the state database (" + describe_postgres_uri(opts.state_db) + ")");
  fast.stop();
  CHECK(fast.reading().reads == nullptr);
}
