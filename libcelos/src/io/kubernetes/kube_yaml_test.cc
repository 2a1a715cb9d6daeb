// The kubeconfig YAML reader: what kubectl writes, JSON, and what it refuses.
#include "io/kubernetes/kube_yaml.h"

#include <catch2/catch.hpp>

namespace json = boost::json;
using celos::kube::parse_yaml;

TEST_CASE("the YAML that kubectl writes reads as JSON") {
  const std::string text = R"(apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTg==
    server: https://127.0.0.1:6443   # the API server
  name: kind-kind
contexts:
- context:
    cluster: kind-kind
    namespace: "batch jobs"
    user: 'it''s me'
  name: kind-kind
current-context: kind-kind
kind: Config
preferences: {}
users:
- name: 'it''s me'
  user:
    token: "abc#def"
    list:
    - one
    -
      two: 2
)";
  auto doc = parse_yaml(text);
  INFO((doc ? "" : doc.error().message));
  REQUIRE(doc);
  const json::value expected = json::parse(R"({"apiVersion":"v1",
    "clusters":[{"cluster":{"certificate-authority-data":"LS0tLS1CRUdJTg==",
                            "server":"https://127.0.0.1:6443"},"name":"kind-kind"}],
    "contexts":[{"context":{"cluster":"kind-kind","namespace":"batch jobs","user":"it's me"},
                 "name":"kind-kind"}],
    "current-context":"kind-kind","kind":"Config","preferences":{},
    "users":[{"name":"it's me","user":{"token":"abc#def","list":["one",{"two":"2"}]}}]})");
  CHECK(*doc == expected);
}

TEST_CASE("a kubeconfig written as JSON reads as it is") {
  auto doc = parse_yaml(R"( {"current-context": "fake", "contexts": []})");
  REQUIRE(doc);
  CHECK(doc->as_object().at("current-context") == "fake");
}

TEST_CASE("sequences may sit at the indentation of their key") {
  auto doc = parse_yaml("users:\n- name: a\n  user: {}\n- name: b\nkind: Config\n");
  REQUIRE(doc);
  CHECK(*doc == json::parse(R"({"users":[{"name":"a","user":{}},{"name":"b"}],"kind":"Config"})"));
}

TEST_CASE("flow collections on one line read as YAML reads them") {
  auto doc =
      parse_yaml("context: {cluster: c, user: 'it''s', ns: \"a,b\"}\nlist: [a, b , {x: 1}]\n");
  INFO((doc ? "" : doc.error().message));
  REQUIRE(doc);
  CHECK(*doc == json::parse(R"({"context":{"cluster":"c","user":"it's","ns":"a,b"},
                                "list":["a","b",{"x":"1"}]})"));
  CHECK(!parse_yaml("a: {b: c\n"));
}

TEST_CASE("YAML that celos does not read is refused with its line") {
  auto anchors = parse_yaml("a: 1\nb: &x 2\n");
  REQUIRE(!anchors);
  CHECK(anchors.error().message.find("line 2") != std::string::npos);
  auto block = parse_yaml("a: |\n  text\n");
  REQUIRE(!block);
  CHECK(block.error().message.find("line 1") != std::string::npos);
  auto indent = parse_yaml("a:\n  b: 1\n c: 2\n");
  REQUIRE(!indent);
  CHECK(indent.error().message.find("line 3") != std::string::npos);
  CHECK(!parse_yaml("{\"a\": ").has_value());
}
