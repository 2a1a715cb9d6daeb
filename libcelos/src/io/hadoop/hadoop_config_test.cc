#include <catch2/catch.hpp>

#include "celos/hadoop.h"
#include "io/hadoop/hadoop_test_util.h"

namespace celos {
namespace {

using hadoop_test::recorded;
using Addresses = std::vector<std::string>;

HadoopConfig config_of(std::initializer_list<std::pair<const std::string, std::string>> props) {
  HadoopConfig c;
  c.properties = props;
  return c;
}

HadoopConfig sample_config() {
  HadoopConfig c;
  REQUIRE(merge_hadoop_config_xml(c, recorded("core-site.xml"), "core-site.xml"));
  REQUIRE(merge_hadoop_config_xml(c, recorded("hdfs-site.xml"), "hdfs-site.xml"));
  return c;
}

TEST_CASE("A site file's properties are read past the declaration, comments and descriptions") {
  HadoopConfig c = sample_config();
  CHECK(c.get("hadoop.security.authentication") == "simple");
  CHECK_FALSE(c.properties.contains("commented.out"));
  CHECK(c.get("celos.test.empty") == "");
  CHECK(c.properties.contains("celos.test.empty"));
  CHECK(c.get("celos.test.missing", "fallback") == "fallback");
}

TEST_CASE("Entities and CDATA in values are decoded, and names are trimmed but values are not") {
  HadoopConfig c = sample_config();
  CHECK(c.get("celos.test.entities") == "a <b> & \"c\" 'd' AB");
  CHECK(c.get("celos.test.cdata") == "<raw> & text");
  CHECK(c.get("celos.test.spaces") == "  kept as is  ");
}

TEST_CASE("A final property is not overridden by a later file, other properties are") {
  HadoopConfig c = sample_config();
  CHECK(c.get("fs.defaultFS") == "hdfs://nameservice1");
  REQUIRE(
      merge_hadoop_config_xml(c,
                              "<configuration><property><name>hadoop.security.authentication</name>"
                              "<value>kerberos</value></property></configuration>",
                              "later.xml"));
  CHECK(c.get("hadoop.security.authentication") == "kerberos");
}

TEST_CASE("References to other properties are expanded, unknown ones kept") {
  HadoopConfig c = config_of({{"a", "${b}/x"}, {"b", "${c}"}, {"c", "z"}, {"d", "${nope} ${d}"}});
  CHECK(c.get("a") == "z/x");
  CHECK(c.get("d") == "${nope} ${d}");
}

TEST_CASE("A broken site file is an error that names it and leaves the config unchanged") {
  HadoopConfig c = config_of({{"kept", "yes"}});
  auto r = merge_hadoop_config_xml(
      c, "<configuration><property><name>x</name><value>1</value></configuration>", "bad.xml");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("bad.xml") != std::string::npos);
  CHECK(c.properties == std::map<std::string, std::string>{{"kept", "yes"}});
}

TEST_CASE("A configuration directory is read from core-site.xml then hdfs-site.xml") {
  celos::testing::TempDir dir;
  celos::testing::write_text_file(
      dir / "core-site.xml",
      "<configuration><property><name>fs.defaultFS</name><value>hdfs://a:8020</value></property>"
      "<property><name>x</name><value>core</value></property></configuration>");
  celos::testing::write_text_file(
      dir / "hdfs-site.xml",
      "<configuration><property><name>x</name><value>hdfs</value></property></configuration>");
  auto c = read_hadoop_config_dir(dir.path());
  REQUIRE(c);
  CHECK(c->get("fs.defaultFS") == "hdfs://a:8020");
  CHECK(c->get("x") == "hdfs");
}

TEST_CASE("A configuration directory without site files is an empty configuration") {
  celos::testing::TempDir dir;
  auto c = read_hadoop_config_dir(dir / "missing");
  REQUIRE(c);
  CHECK(c->properties.empty());
}

TEST_CASE("An HA name service maps to the HTTP address of each of its name nodes in order") {
  auto a = namenode_http_addresses(sample_config(), "nameservice1");
  REQUIRE(a);
  CHECK(*a == Addresses{"nn1.example.com:9870", "nn2.example.com:9870"});
}

TEST_CASE("An empty authority means the name service of fs.defaultFS") {
  auto a = namenode_http_addresses(sample_config(), "");
  REQUIRE(a);
  CHECK(a->size() == 2);
}

TEST_CASE("An HA name node without an HTTP address uses its RPC host and the default port") {
  HadoopConfig c = config_of({{"dfs.nameservices", "ns"},
                              {"dfs.ha.namenodes.ns", "a,b"},
                              {"dfs.namenode.rpc-address.ns.a", "ha:8020"},
                              {"dfs.namenode.http-address.ns.b", "hb:50070"}});
  auto a = namenode_http_addresses(c, "ns");
  REQUIRE(a);
  CHECK(*a == Addresses{"ha:9870", "hb:50070"});
}

TEST_CASE("A name service with no name node addresses is an error naming it") {
  HadoopConfig c = config_of({{"dfs.nameservices", "ns"}});
  auto a = namenode_http_addresses(c, "ns");
  REQUIRE_FALSE(a);
  CHECK(a.error().message.find("ns") != std::string::npos);
}

TEST_CASE("A plain name node uses dfs.namenode.http-address of its own cluster") {
  HadoopConfig c = config_of({{"fs.defaultFS", "hdfs://nn.example.com:8020"},
                              {"dfs.namenode.http-address", "web.example.com:50070"}});
  CHECK(*namenode_http_addresses(c, "nn.example.com:8020") == Addresses{"web.example.com:50070"});
  CHECK(*namenode_http_addresses(c, "") == Addresses{"web.example.com:50070"});
  // Another cluster's name node: its host, the default port.
  CHECK(*namenode_http_addresses(c, "other:8020") == Addresses{"other:9870"});
}

TEST_CASE("A wildcard dfs.namenode.http-address lends only its port") {
  HadoopConfig c = config_of({{"dfs.namenode.http-address", "0.0.0.0:50070"}});
  CHECK(*namenode_http_addresses(c, "nn:8020") == Addresses{"nn:50070"});
}

TEST_CASE("Without any configuration a name node's HTTP port is 9870") {
  CHECK(*namenode_http_addresses(HadoopConfig{}, "nn:8020") == Addresses{"nn:9870"});
  CHECK_FALSE(namenode_http_addresses(HadoopConfig{}, ""));
}

}  // namespace
}  // namespace celos
