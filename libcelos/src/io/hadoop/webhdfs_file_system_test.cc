#include <catch2/catch.hpp>

#include "celos/hadoop.h"
#include "io/hadoop/hadoop_test_util.h"

namespace celos {
namespace {

using celos::testing::FakeHttpClient;
using hadoop_test::answer;
using hadoop_test::recorded;
using hadoop_test::route;

const char* kNn1 = "http://nn1:9870/webhdfs/v1";
const char* kNn2 = "http://nn2:9870/webhdfs/v1";

struct WebHdfsFixture {
  std::shared_ptr<FakeHttpClient> http = std::make_shared<FakeHttpClient>();
  std::shared_ptr<FileSystem> fs = make_webhdfs_file_system(http, {"nn1:9870"}, "celos");
  std::shared_ptr<FileSystem> ha = make_webhdfs_file_system(http, {"nn1:9870", "nn2:9870"}, "");
};

TEST_CASE_METHOD(WebHdfsFixture, "exists asks GETFILESTATUS and a 200 means the path exists") {
  http->on(route("GET", kNn1, answer(200, recorded("getfilestatus_file.json"))));
  auto r = fs->exists("/logs/2015-09-14/1500/_READY");
  REQUIRE(r);
  CHECK(*r);
  REQUIRE(http->requests.size() == 1);
  CHECK(http->requests[0].url ==
        "http://nn1:9870/webhdfs/v1/logs/2015-09-14/1500/_READY?op=GETFILESTATUS&user.name=celos");
  CHECK_FALSE(http->requests[0].follow_redirects);
}

TEST_CASE_METHOD(WebHdfsFixture, "exists is false on a 404 FileNotFoundException") {
  http->on(route("GET", kNn1, answer(404, recorded("file_not_found.json"))));
  auto r = fs->exists("/logs/2015-09-14/1500/_READY");
  REQUIRE(r);
  CHECK_FALSE(*r);
}

TEST_CASE_METHOD(WebHdfsFixture,
                 "exists is an error carrying the RemoteException on other answers") {
  http->on(route("GET", kNn1, answer(500, recorded("server_error.json"))));
  auto r = fs->exists("/x");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("java.io.IOException: Cannot obtain block length") !=
        std::string::npos);
  CHECK(r.error().message.find("500") != std::string::npos);
}

TEST_CASE_METHOD(WebHdfsFixture, "Path segments are percent-encoded and slashes kept") {
  http->on(route("GET", kNn1, answer(404, recorded("file_not_found.json"))));
  REQUIRE(fs->exists("/a dir/ü&x"));
  CHECK(http->requests[0].url ==
        "http://nn1:9870/webhdfs/v1/a%20dir/%C3%BC%26x?op=GETFILESTATUS&user.name=celos");
}

TEST_CASE_METHOD(WebHdfsFixture,
                 "A standby name node is skipped and the active one is asked first next") {
  http->on(route("GET", kNn1, answer(403, recorded("standby.json"))));
  http->on(route("GET", kNn2, answer(200, recorded("getfilestatus_file.json"))));
  REQUIRE(*ha->exists("/a"));
  REQUIRE(http->requests.size() == 2);
  CHECK(http->requests[1].url.starts_with(kNn2));
  REQUIRE(*ha->exists("/b"));
  REQUIRE(http->requests.size() == 3);
  CHECK(http->requests[2].url.starts_with(kNn2));
}

TEST_CASE_METHOD(WebHdfsFixture, "An unreachable name node is skipped") {
  http->on(route("GET", kNn1, fail("GET http://nn1:9870/... failed: Connection refused")));
  http->on(route("GET", kNn2, answer(404, recorded("file_not_found.json"))));
  auto r = ha->exists("/a");
  REQUIRE(r);
  CHECK_FALSE(*r);
}

TEST_CASE_METHOD(WebHdfsFixture,
                 "When no name node is active the error says what each one answered") {
  http->on(route("GET", kNn1, fail("GET http://nn1:9870/... failed: Connection refused")));
  http->on(route("GET", kNn2, answer(403, recorded("standby.json"))));
  auto r = ha->exists("/a");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("Connection refused") != std::string::npos);
  CHECK(r.error().message.find("StandbyException") != std::string::npos);
}

TEST_CASE_METHOD(WebHdfsFixture,
                 "A 403 that is not a standby answer is an answer, not a failover") {
  http->on(
      route("GET", kNn1,
            answer(403, R"({"RemoteException":{"exception":"AccessControlException",)"
                        R"("javaClassName":"org.apache.hadoop.security.AccessControlException",)"
                        R"("message":"Permission denied"}})")));
  auto r = ha->exists("/a");
  REQUIRE_FALSE(r);
  CHECK(http->requests.size() == 1);
  CHECK(r.error().message.find("Permission denied") != std::string::npos);
}

TEST_CASE_METHOD(WebHdfsFixture, "read follows OPEN's redirect to the data node") {
  http->on(route("GET", kNn1, answer(200, "content")));
  auto r = fs->read("/app/workflow.xml");
  REQUIRE(r);
  CHECK(*r == "content");
  CHECK(http->requests[0].url.find("op=OPEN") != std::string::npos);
  CHECK(http->requests[0].follow_redirects);
}

TEST_CASE_METHOD(WebHdfsFixture, "read of a missing file is kNotFound") {
  http->on(route("GET", kNn1, answer(404, recorded("file_not_found.json"))));
  auto r = fs->read("/nope");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kNotFound);
}

TEST_CASE_METHOD(WebHdfsFixture,
                 "write sends CREATE to the name node, then the data to its redirect") {
  const std::string datanode =
      "http://dn1:9864/webhdfs/v1/app/workflow.xml?op=CREATE&overwrite=true";
  http->on(route("PUT", kNn1, answer(307, "", {{"Location", datanode}})));
  http->on(route("PUT", "http://dn1:9864/", answer(201, "", {{"Location", "hdfs://nn1/app"}})));
  REQUIRE(fs->write("/app/workflow.xml", "<workflow-app/>"));
  REQUIRE(http->requests.size() == 2);
  CHECK(http->requests[0].url ==
        "http://nn1:9870/webhdfs/v1/app/workflow.xml?op=CREATE&user.name=celos&overwrite=true");
  CHECK_FALSE(http->requests[0].follow_redirects);
  CHECK(http->requests[0].body.empty());
  CHECK(http->requests[1].url == datanode);
  CHECK(http->requests[1].body == "<workflow-app/>");
}

TEST_CASE_METHOD(WebHdfsFixture, "A CREATE without a redirect is an error") {
  http->on(route("PUT", kNn1, answer(500, recorded("server_error.json"))));
  auto r = fs->write("/a", "x");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("CREATE") != std::string::npos);
}

TEST_CASE_METHOD(WebHdfsFixture, "A failing data node fails the write") {
  http->on(route("PUT", kNn1, answer(307, "", {{"Location", "http://dn1:9864/x"}})));
  http->on(route("PUT", "http://dn1:9864/", answer(500, recorded("server_error.json"))));
  CHECK_FALSE(fs->write("/a", "x"));
}

TEST_CASE_METHOD(WebHdfsFixture, "make_dirs is MKDIRS and a false answer is an error") {
  http->on(route("PUT", kNn1, answer(200, recorded("boolean_true.json"))));
  REQUIRE(fs->make_dirs("/app/lib"));
  CHECK(http->requests[0].url == "http://nn1:9870/webhdfs/v1/app/lib?op=MKDIRS&user.name=celos");

  auto refusing = std::make_shared<FakeHttpClient>();
  refusing->on(route("PUT", kNn1, answer(200, recorded("boolean_false.json"))));
  CHECK_FALSE(make_webhdfs_file_system(refusing, {"nn1:9870"}, "")->make_dirs("/x"));
}

TEST_CASE_METHOD(WebHdfsFixture, "remove is a recursive DELETE and nothing there is fine") {
  http->on(route("DELETE", kNn1, answer(200, recorded("boolean_false.json"))));
  REQUIRE(fs->remove("/app"));
  CHECK(http->requests[0].method == "DELETE");
  CHECK(http->requests[0].url ==
        "http://nn1:9870/webhdfs/v1/app?op=DELETE&user.name=celos&recursive=true");
}

TEST_CASE_METHOD(WebHdfsFixture,
                 "rename is RENAME with an encoded destination, false is an error") {
  http->on(route("PUT", kNn1, answer(200, recorded("boolean_false.json"))));
  auto r = fs->rename("/a", "/b c");
  CHECK(http->requests[0].url ==
        "http://nn1:9870/webhdfs/v1/a?op=RENAME&user.name=celos&destination=%2Fb%20c");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("/b c") != std::string::npos);
}

TEST_CASE_METHOD(WebHdfsFixture, "list reads LISTSTATUS sorted by name with types and sizes") {
  http->on(route("GET", kNn1, answer(200, recorded("liststatus.json"))));
  auto r = fs->list("/app");
  REQUIRE(r);
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].name == "lib");
  CHECK((*r)[0].is_directory);
  CHECK((*r)[1].name == "workflow.xml");
  CHECK_FALSE((*r)[1].is_directory);
  CHECK((*r)[1].size == 24930);
}

TEST_CASE_METHOD(WebHdfsFixture, "list of a missing directory is kNotFound") {
  http->on(route("GET", kNn1, answer(404, recorded("file_not_found.json"))));
  auto r = fs->list("/nope");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kNotFound);
}

// ---- the resolver

HadoopConfig ha_config() {
  HadoopConfig c;
  REQUIRE(merge_hadoop_config_xml(c, recorded("core-site.xml"), "core-site.xml"));
  REQUIRE(merge_hadoop_config_xml(c, recorded("hdfs-site.xml"), "hdfs-site.xml"));
  return c;
}

TEST_CASE("The resolver checks hdfs:// name services over WebHDFS on their name nodes") {
  auto http = std::make_shared<FakeHttpClient>();
  http->on(route("GET", "http://nn1.example.com:9870/", answer(403, recorded("standby.json"))));
  http->on(route("GET", "http://nn2.example.com:9870/",
                 answer(200, recorded("getfilestatus_file.json"))));
  auto resolver = make_hadoop_file_system_resolver(ha_config(), http, "celos");
  auto fs = resolver->resolve("hdfs://nameservice1");
  REQUIRE(fs);
  REQUIRE(*(*fs)->exists("/x"));
  CHECK(http->requests.back().url ==
        "http://nn2.example.com:9870/webhdfs/v1/x?op=GETFILESTATUS&user.name=celos");
}

TEST_CASE("The resolver maps the empty URI to fs.defaultFS and caches what it built") {
  auto http = std::make_shared<FakeHttpClient>();
  auto resolver = make_hadoop_file_system_resolver(ha_config(), http, "");
  auto by_default = resolver->resolve("");
  auto by_name = resolver->resolve("hdfs://nameservice1/");
  REQUIRE(by_default);
  REQUIRE(by_name);
  CHECK(*by_default == *by_name);
}

TEST_CASE("The resolver takes webhdfs://host:port directly") {
  auto http = std::make_shared<FakeHttpClient>();
  http->on(route("GET", "http://127.0.0.1:50070/", answer(404, recorded("file_not_found.json"))));
  auto resolver = make_hadoop_file_system_resolver(HadoopConfig{}, http, "");
  auto fs = resolver->resolve("webhdfs://127.0.0.1:50070");
  REQUIRE(fs);
  auto r = (*fs)->exists("/y");
  REQUIRE(r);
  CHECK_FALSE(*r);
  CHECK(http->requests.size() == 1);
}

TEST_CASE("The resolver refuses schemes it does not know") {
  auto resolver =
      make_hadoop_file_system_resolver(HadoopConfig{}, std::make_shared<FakeHttpClient>(), "");
  auto r = resolver->resolve("s3://bucket");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("s3://bucket") != std::string::npos);
}

TEST_CASE("The resolver maps file: URIs, and everything without fs.defaultFS, to the local disk") {
  celos::testing::TempDir dir;
  celos::testing::write_text_file(dir / "_READY", "");
  auto resolver =
      make_hadoop_file_system_resolver(HadoopConfig{}, std::make_shared<FakeHttpClient>(), "");
  for (const char* uri : {"file:///", "file:/", ""}) {
    auto fs = resolver->resolve(uri);
    REQUIRE(fs);
    CHECK(*(*fs)->exists(dir / "_READY"));
    CHECK_FALSE(*(*fs)->exists(dir / "_NOT_READY"));
  }
}

}  // namespace
}  // namespace celos
