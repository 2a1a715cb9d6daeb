// Kubeconfig and in-cluster credentials: the current context, tokens, certificates and CAs as
// files (relative to the kubeconfig) or inline base64, and clear errors.
#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>

#include "celos/kubernetes_service.h"
#include "testing/temp_dir.h"

using namespace celos;

namespace {

const std::string kConfig = R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-cluster
  cluster:
    server: https://kube.example:6443/
    certificate-authority: ca.crt
- name: test-cluster
  cluster:
    server: http://127.0.0.1:8080
    insecure-skip-tls-verify: true
contexts:
- name: prod
  context: {cluster: prod-cluster, user: robot, namespace: etl}
- name: test
  context:
    cluster: test-cluster
    user: certs
users:
- name: robot
  user:
    token: s3cret
- name: certs
  user:
    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t
    client-key: /keys/celos.key
- name: plugin
  user:
    exec: {command: aws}
)";

}  // namespace

TEST_CASE("the current context's cluster, user and namespace are read from a kubeconfig") {
  auto c = parse_kubeconfig(kConfig, "/home/celos/.kube/config");
  INFO((c ? "" : c.error().message));
  REQUIRE(c);
  CHECK(c->server == "https://kube.example:6443");
  CHECK(c->namespace_ == "etl");
  CHECK(c->token == "s3cret");
  CHECK(c->ca_file == "/home/celos/.kube/ca.crt");  // relative to the kubeconfig
  CHECK(!c->insecure);
  CHECK(c->source == "kubeconfig /home/celos/.kube/config (context prod)");
}

TEST_CASE("another context, inline certificates and insecure-skip-tls-verify") {
  auto c = parse_kubeconfig(kConfig, "/k/config", "test");
  REQUIRE(c);
  CHECK(c->server == "http://127.0.0.1:8080");
  CHECK(c->insecure);
  CHECK(c->cert_pem == "-----BEGIN CERTIFICATE-----");
  CHECK(c->key_file == "/keys/celos.key");
  CHECK(c->token.empty());
  CHECK(c->namespace_.empty());
}

TEST_CASE("kubeconfig errors name the file and what is missing") {
  auto missing_context = parse_kubeconfig(kConfig, "/k/config", "nope");
  REQUIRE(!missing_context);
  CHECK(missing_context.error().message == "/k/config: no context \"nope\"");
  const std::string with_plugin =
      "current-context: p\nclusters:\n- name: c\n  cluster: {server: \"https://x\"}\n"
      "contexts:\n- name: p\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user:\n"
      "    exec: {command: aws}\n";
  auto exec = parse_kubeconfig(with_plugin, "/k/config");
  REQUIRE(!exec);
  CHECK(exec.error().message.find("exec or auth-provider plugin") != std::string::npos);
  auto no_file = read_kubeconfig("/nonexistent/kubeconfig");
  REQUIRE(!no_file);
  CHECK(no_file.error().message == "cannot read the kubeconfig /nonexistent/kubeconfig");
  auto syntax = parse_kubeconfig("a: 1\nb: *alias\n", "/k/config");
  REQUIRE(!syntax);
  CHECK(syntax.error().message.find("/k/config: line 2") == 0);
}

TEST_CASE("in-cluster credentials come from the environment and the service account files") {
  celos::testing::TempDir dir;
  std::ofstream(dir.path() + "/token") << "tok\n";
  std::ofstream(dir.path() + "/namespace") << "jobs\n";
  ::setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto c = in_cluster_credentials(dir.path());
  REQUIRE(c);
  CHECK(c->server == "https://10.96.0.1:443");
  CHECK(c->token_file == dir.path() + "/token");
  CHECK(c->ca_file == dir.path() + "/ca.crt");
  CHECK(c->namespace_ == "jobs");
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  auto outside = in_cluster_credentials(dir.path());
  REQUIRE(!outside);
  CHECK(outside.error().message.find("KUBERNETES_SERVICE_HOST") != std::string::npos);
}
