// The executor contract (testing/executor_contract.h) against the fake Kubernetes API server of
// test/kubernetes/ (its scripted cluster runs each pod's command as a local process). Hidden
// from the unit run: test/executors/test_executor_contract.py starts the fake (with a bearer
// token and a forbidden namespace) and runs this binary with "[.kubernetes-contract]" and
// CELOS_CONTRACT_KUBE_SERVER / CELOS_CONTRACT_KUBE_TOKEN / CELOS_CONTRACT_KUBE_FORBIDDEN set.
#include <cstdlib>

#include <catch2/catch.hpp>

#include "celos/http_client.h"
#include "celos/kubernetes_service.h"
#include "testing/executor_contract.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  INFO(name << " must be set (test/executors/test_executor_contract.py sets it)");
  REQUIRE(value != nullptr);
  return value;
}

TEST_CASE("the Kubernetes service keeps the executor contract (fake API server)",
          "[.kubernetes-contract]") {
  KubeCredentials credentials;
  credentials.server = environment("CELOS_CONTRACT_KUBE_SERVER");
  credentials.token = environment("CELOS_CONTRACT_KUBE_TOKEN");
  credentials.source = "the contract's fake API server";
  const std::string forbidden = environment("CELOS_CONTRACT_KUBE_FORBIDDEN");
  testing::TempDir ledger;
  auto http = make_curl_http_client();
  auto service_in = [&](std::string ns) {
    KubernetesServiceOptions options;
    options.namespace_ = std::move(ns);
    options.image = "busybox";
    options.command = {"/bin/sh", "-c", testing::contract_job_script(ledger.path())};
    return make_kubernetes_external_service(std::move(options), credentials, http);
  };
  testing::ExecutorBench bench;
  bench.make_service = [&] { return service_in("contract"); };
  // The API server forbids this service account to create Jobs there (403).
  bench.make_refusing_service = [&] { return service_in(forbidden); };
  bench.lose_job = [&](const SlotId&, const std::string& id) {
    const auto slash = id.find('/');
    REQUIRE(slash != std::string::npos);
    HttpRequest request;
    request.method = "POST";
    request.url = credentials.server +
                  "/_control/delete-job?namespace=" + url_encode(id.substr(0, slash)) +
                  "&name=" + url_encode(id.substr(slash + 1));
    auto answer = http->send(request);
    REQUIRE(answer);
    REQUIRE(answer->status == 200);
  };
  bench.starts = [&](const SlotId& slot) { return testing::ledger_starts(ledger.path(), slot); };
  testing::check_executor_contract(bench, "kube");
}

}  // namespace
}  // namespace celos
