#include <catch2/catch.hpp>

#include "celos/deploy.h"

namespace celos {
namespace {

TEST_CASE("sftp URLs give user, host, port and an absolute path") {
  auto l = parse_location("sftp://celos@celos002.example.net:2222/etc/celos/workflows/");
  REQUIRE(l);
  CHECK(l->scheme == Location::Scheme::kSftp);
  CHECK(l->user == "celos");
  CHECK(l->host == "celos002.example.net");
  CHECK(l->port == 2222);
  CHECK(l->path == "/etc/celos/workflows");
  CHECK(to_string(*l) == "sftp://celos@celos002.example.net:2222/etc/celos/workflows");
}

TEST_CASE("sftp URLs without user or port leave the user empty and use port 22") {
  auto l = parse_location("sftp://host/t.json");
  REQUIRE(l);
  CHECK(l->user.empty());
  CHECK(l->port == 22);
  CHECK(l->path == "/t.json");
  auto v6 = parse_location("sftp://[::1]:2200/x");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(v6->port == 2200);
}

TEST_CASE("file URLs come in the three usual spellings") {
  for (const char* url : {"file:///etc/celos/defaults", "file:/etc/celos/defaults",
                          "file://localhost/etc/celos/defaults"}) {
    auto l = parse_location(url);
    REQUIRE(l);
    CHECK(l->scheme == Location::Scheme::kFile);
    CHECK(l->path == "/etc/celos/defaults");
  }
}

TEST_CASE("other schemes, hosts in file URLs, relative paths and bad ports are invalid") {
  for (const char* url : {"http://h/x", "hdfs://nn/x", "file://otherhost/x", "file:relative",
                          "sftp://host", "sftp://host:0/x", "sftp://host:99999/x",
                          "sftp://host:22a/x", "sftp:///x", "/plain/path"}) {
    INFO(url);
    auto l = parse_location(url);
    REQUIRE_FALSE(l);
    CHECK(l.error().code == ErrorCode::kInvalid);
  }
}

TEST_CASE("child locations join with one slash") {
  auto root = parse_location("file:///");
  REQUIRE(root);
  CHECK(child_location(*root, "a.js").path == "/a.js");
  auto dir = parse_location("sftp://h/etc/celos/");
  REQUIRE(dir);
  CHECK(child_location(*dir, "a.js").path == "/etc/celos/a.js");
}

TEST_CASE("the manual's target file, trailing comma included, is read") {
  const char* json = R"({
    "hadoop.hdfs-site.xml": "sftp://celos002/etc/hadoop/conf/hdfs-site.xml",
    "hadoop.core-site.xml": "sftp://celos002/etc/hadoop/conf/core-site.xml",
    "defaults.dir.uri": "sftp://celos002/etc/celos/defaults",
    "workflows.dir.uri": "file:///etc/celos/workflows",
  })";
  auto target = parse_deploy_target(json, "t.json");
  REQUIRE(target);
  CHECK(target->hdfs_site_url == "sftp://celos002/etc/hadoop/conf/hdfs-site.xml");
  CHECK(target->core_site_url == "sftp://celos002/etc/hadoop/conf/core-site.xml");
  CHECK(target->defaults_dir_url == "sftp://celos002/etc/celos/defaults");
  CHECK(target->workflows_dir_url == "file:///etc/celos/workflows");
}

TEST_CASE("a target lacking a key names the key") {
  auto target = parse_deploy_target(R"({"hadoop.hdfs-site.xml": "file:///h",
      "hadoop.core-site.xml": "file:///c", "defaults.dir.uri": "file:///d"})",
                                    "t.json");
  REQUIRE_FALSE(target);
  CHECK(target.error().code == ErrorCode::kInvalid);
  CHECK(target.error().message == "target file t.json lacks \"workflows.dir.uri\"");
}

TEST_CASE("a target value that is not a file or sftp URL is rejected naming the key") {
  auto target = parse_deploy_target(R"({"hadoop.hdfs-site.xml": "hdfs://nn/h",
      "hadoop.core-site.xml": "file:///c", "defaults.dir.uri": "file:///d",
      "workflows.dir.uri": "file:///w"})",
                                    "t.json");
  REQUIRE_FALSE(target);
  CHECK(target.error().message.find("hadoop.hdfs-site.xml") != std::string::npos);
}

TEST_CASE("a target that is not JSON or not an object is rejected") {
  CHECK_FALSE(parse_deploy_target("{not json", "t.json"));
  CHECK_FALSE(parse_deploy_target("[1, 2]", "t.json"));
  auto number = parse_deploy_target(R"({"hadoop.hdfs-site.xml": 1})", "t.json");
  REQUIRE_FALSE(number);
  CHECK(number.error().message.find("must be a string") != std::string::npos);
}

}  // namespace
}  // namespace celos
