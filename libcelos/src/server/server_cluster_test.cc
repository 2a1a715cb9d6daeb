// The choice of cluster from celos-server's options (SPEC §11, §16).
#include "server/server_cluster.h"

#include <catch2/catch.hpp>

using namespace celos;

namespace {

ServerOptions options(std::string host, int port) {
  ServerOptions opts;
  opts.host = std::move(host);
  opts.port = port;
  return opts;
}

}  // namespace

TEST_CASE("a file database is a cluster of one, PostgreSQL a node of the lease cluster") {
  ServerOptions opts = options("127.0.0.1", 8080);
  CHECK_FALSE(choose_cluster(opts, "box").shared);
  opts.state_db = "file:/var/lib/celos/db";
  CHECK_FALSE(choose_cluster(opts, "box").shared);
  opts.state_db = "postgresql://celos@db.example/celos";
  CHECK(choose_cluster(opts, "box").shared);
}

TEST_CASE("the node id and the advertised URL default to the host name and --host") {
  ServerOptions opts = options("10.1.2.3", 8080);
  opts.cluster_name = "prod";
  opts.lease_seconds = 12;
  const ClusterChoice choice = choose_cluster(opts, "box");
  CHECK(choice.options.name == "prod");
  CHECK(choice.options.node_id == "box:8080");
  CHECK(choice.options.url == "http://10.1.2.3:8080");
  CHECK(choice.options.lease == std::chrono::seconds(12));
  CHECK_FALSE(choice.loopback_url);
  // A wildcard --host advertises the machine's name.
  for (const char* wildcard : {"0.0.0.0", "::", "[::]"}) {
    CHECK(choose_cluster(options(wildcard, 9), "box").options.url == "http://box:9");
  }
}

TEST_CASE(
    "cluster identity: --node-id and --advertise-url win, the URL loses its trailing slashes") {
  ServerOptions opts = options("0.0.0.0", 8080);
  opts.node_id = "node-a";
  opts.advertise_url = "https://a.example:443//";
  const ClusterChoice choice = choose_cluster(opts, "box");
  CHECK(choice.options.node_id == "node-a");
  CHECK(choice.options.url == "https://a.example:443");
  opts.advertise_url = "/";
  CHECK(choose_cluster(opts, "box").options.url == "/");
}

TEST_CASE("an advertised loopback URL is noticed (other hosts could not forward to it)") {
  CHECK(choose_cluster(options("127.0.0.1", 8080), "box").loopback_url);
  CHECK(choose_cluster(options("127.0.1.1", 8080), "box").loopback_url);
  CHECK(choose_cluster(options("localhost", 8080), "box").loopback_url);
  CHECK(choose_cluster(options("[::1]", 8080), "box").loopback_url);
  CHECK_FALSE(choose_cluster(options("0.0.0.0", 8080), "box").loopback_url);
  ServerOptions advertised = options("127.0.0.1", 8080);
  advertised.advertise_url = "http://node-a.example:8080";
  CHECK_FALSE(choose_cluster(advertised, "box").loopback_url);
}

TEST_CASE("this machine's name, or the fallback") { CHECK_FALSE(machine_name("unknown").empty()); }
