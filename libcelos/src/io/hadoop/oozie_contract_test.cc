// The executor contract (testing/executor_contract.h) against the fake Oozie of
// test/hadoop/fake_oozie.py (its REST API as Oozie documents it). Hidden from the unit run:
// test/executors/test_executor_contract.py starts the fake and runs this binary with
// "[.oozie-contract]" and CELOS_CONTRACT_OOZIE_URL set. An Oozie job runs no command here, so
// the bench ends started jobs through the fake's /_control endpoints as their workflow ids say,
// and counts a slot's starts as its jobs that left PREP (Oozie refuses to start a job twice).
#include <cstdlib>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "celos/hadoop.h"
#include "celos/http_client.h"
#include "testing/executor_contract.h"

namespace celos {
namespace {

namespace json = boost::json;

class FakeOozieControl {
 public:
  FakeOozieControl(std::shared_ptr<HttpClient> http, std::string root)
      : http_(std::move(http)), root_(std::move(root)) {}

  // Every job: id -> {"status", "properties"}.
  json::object jobs() {
    HttpRequest request;
    request.url = root_ + "/_control/jobs";
    auto answer = http_->send(request);
    REQUIRE(answer);
    REQUIRE(answer->status == 200);
    return json::parse(answer->body).as_object();
  }
  void set_status(const std::string& id, const std::string& status) {
    HttpRequest request;
    request.method = "POST";
    request.url = root_ + "/_control/status?id=" + url_encode(id) + "&status=" + status;
    auto answer = http_->send(request);
    REQUIRE(answer);
    REQUIRE(answer->status == 200);
  }
  // Started jobs end as their workflow id says: -ok SUCCEEDED, -fail FAILED, -long runs on.
  void advance() {
    for (const auto& [id, job] : jobs()) {
      if (job.at("status") != "RUNNING") continue;
      const std::string name = workflow_of(job);
      if (name.ends_with("-ok")) set_status(std::string(id), "SUCCEEDED");
      if (name.ends_with("-fail")) set_status(std::string(id), "FAILED");
    }
  }
  int starts(const SlotId& slot) {
    const std::string wanted = slot.workflow + "@" + format_time_short(slot.time);
    int started = 0;
    for (const auto& [id, job] : jobs()) {
      const auto& properties = job.at("properties").as_object();
      const auto* name = properties.if_contains("celosWorkflowName");
      if (name != nullptr && std::string_view(name->as_string()) == wanted &&
          job.at("status") != "PREP") {
        ++started;
      }
    }
    return started;
  }

 private:
  static std::string workflow_of(const json::value& job) {
    const auto* name = job.at("properties").as_object().if_contains("celosWorkflowName");
    if (name == nullptr) return {};
    const std::string text(name->as_string());
    return text.substr(0, text.find('@'));
  }

  std::shared_ptr<HttpClient> http_;
  std::string root_;
};

TEST_CASE("the Oozie service keeps the executor contract (fake Oozie)", "[.oozie-contract]") {
  const char* url = std::getenv("CELOS_CONTRACT_OOZIE_URL");
  INFO("CELOS_CONTRACT_OOZIE_URL must name the fake Oozie (http://127.0.0.1:PORT/oozie)");
  REQUIRE(url != nullptr);
  const std::string oozie = url;
  const std::string root = oozie.substr(0, oozie.rfind('/'));
  auto http = make_curl_http_client();
  FakeOozieControl control(http, root);
  using Properties = std::map<std::string, std::string>;
  auto service_with = [&](Properties properties) {
    return make_oozie_external_service(
        http, oozie, {}, [properties](const SlotId&) -> Result<Properties> { return properties; },
        "celos");
  };
  testing::ExecutorBench bench;
  bench.make_service = [&] {
    return service_with({{"oozie.wf.application.path", "hdfs:///contract/workflow.xml"}});
  };
  // Oozie refuses a job without an application path (E0405).
  bench.make_refusing_service = [&] { return service_with({}); };
  bench.lose_job = [&](const SlotId&, const std::string& id) { control.set_status(id, "KILLED"); };
  bench.starts = [&](const SlotId& slot) { return control.starts(slot); };
  bench.advance = [&] { control.advance(); };
  bench.start_is_idempotent = false;
  testing::check_executor_contract(bench, "oozie");
}

}  // namespace
}  // namespace celos
