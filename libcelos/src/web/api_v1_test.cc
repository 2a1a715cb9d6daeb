// The automation API through celos::Api (SPEC §13, §16): check order, maintenance, audit, the
// start-up gate. End-to-end versions are in test/server/test_api_v1.py.
#include <filesystem>
#include <fstream>
#include <future>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "celos/api.h"
#include "celos/api_serving.h"
#include "testing/api_world.h"

namespace {

namespace json = boost::json;
using namespace celos;
using celos::testing::WorldOptions;

const Time kApiV1Now = make_time(2015, 9, 13, 13, 30);

class MemoryAudit final : public AuditSink {
 public:
  void append(const AuditRecord& record) override { records.push_back(record); }
  Result<std::vector<AuditRecord>> latest(std::optional<Time>, std::size_t) override {
    return std::vector<AuditRecord>(records.rbegin(), records.rend());
  }
  std::vector<AuditRecord> records;
};

struct ApiV1World : celos::testing::ApiWorld {
  std::unique_ptr<TokenStore> tokens;
  MemoryAudit audit;
  Metrics metrics;

  explicit ApiV1World(bool with_tokens = false)
      : ApiWorld({.db = WorldOptions::Db::kLocalDisk, .now = kApiV1Now}) {
    std::filesystem::create_directories(*dir / "db");
    remote = "10.0.0.7:5555";
    add("wf").start_time = make_time(2015, 9, 13, 10);
    scheduler.add_listener(metrics);
    if (with_tokens) {
      std::ofstream(*dir / "tokens.json")
          << R"({"tokens":[{"name":"op","role":"operator","sha256":")" +
                 to_hex(sha256("op-token")) + R"("},{"name":"boss","role":"admin","sha256":")" +
                 to_hex(sha256("admin-token")) + R"("}]})";
      tokens = std::move(*TokenStore::open(*dir / "tokens.json"));
    }
    serve({.clock = clock_function(),
           .version = "9.9.9",
           .hosts = default_host_policy("127.0.0.1", ""),
           .auth = {tokens.get(), false},
           .audit = &audit,
           .metrics = &metrics,
           .db = db.get(),
           .node = "here:1"});
  }
  ~ApiV1World() override { api.reset(); }  // it points at audit and metrics, which go first
};

const std::map<std::string, std::string> kOperator{{"authorization", "Bearer op-token"}};
const std::map<std::string, std::string> kAdmin{{"authorization", "Bearer admin-token"}};

TEST_CASE("Only the node that answers the client audits a forwarded mutation") {
  ApiV1World w(true);
  HttpServerRequest request;
  request.method = "POST";
  request.target = "/api/v1/pause?id=wf&paused=true";
  request.remote = "10.0.0.9:4444";
  request.headers = kOperator;
  REQUIRE(parse_request_target(request.target, request.path, request.query));
  // The standby relays the leader's answer and records it with its client and token.
  w.api->audit_answer(request, 200);
  REQUIRE(w.audit.records.size() == 1);
  CHECK(w.audit.records[0].client == "10.0.0.9");
  CHECK(w.audit.records[0].token == "op");
  CHECK(w.audit.records[0].status == 200);
  // The leader runs it and records nothing, accepted or refused.
  request.audited_by_peer = true;
  CHECK(w.api->handle(request).status == 200);
  request.headers.clear();
  CHECK(w.api->handle(request).status == 401);
  CHECK(w.audit.records.size() == 1);
}

TEST_CASE("Checks come in the order Host, route, method, token, parameters") {
  ApiV1World w(true);
  CHECK(w.call("GET", "/nowhere", {{"host", "evil.example:80"}}).status == 403);
  CHECK(w.call("GET", "/nowhere").status == 404);
  CHECK(w.call("GET", "/api/v1/rerun").status == 405);
  CHECK(w.call("POST", "/api/v1/rerun").status == 401);
  CHECK(w.call("POST", "/api/v1/rerun", kOperator).status == 400);
  CHECK(w.call("POST", "/rerun?id=wf&time=2015-09-13T11:00Z", {{"origin", "http://evil.example"}})
            .status == 403);
}

TEST_CASE("Mutating requests are audited, accepted or refused, with the token's name only") {
  ApiV1World w(true);
  w.call("POST", "/api/v1/pause?id=wf&paused=true");
  w.call("POST", "/api/v1/pause?id=wf&paused=true", kOperator);
  w.call("POST", "/api/v1/maintenance?mode=drain", kOperator);
  w.call("GET", "/api/v1/workflow-list");
  REQUIRE(w.audit.records.size() == 3);
  CHECK(w.audit.records[0].status == 401);
  CHECK_FALSE(w.audit.records[0].token);
  CHECK(w.audit.records[1].status == 200);
  CHECK(w.audit.records[1].token == "op");
  CHECK(w.audit.records[1].client == "10.0.0.7");
  CHECK(w.audit.records[1].node == "here:1");
  CHECK(w.audit.records[1].query == "id=wf&paused=true");
  CHECK(w.audit.records[2].status == 403);
  // Refusals of the check (rate-limited by the sink) are told from answers of a route.
  CHECK(w.audit.records[0].refused);
  CHECK_FALSE(w.audit.records[1].refused);
  CHECK(w.audit.records[2].refused);
  const auto listed = w.call_json("GET", "/api/v1/audit", 200, kAdmin);
  CHECK(listed.at("records").as_array().size() == 3);
  CHECK(w.call("GET", "/api/v1/audit", kOperator).status == 403);
  CHECK(w.call("GET", "/api/v1/audit?limit=0", kAdmin).status == 400);
}

TEST_CASE("An audited request's long query is cut to its limit and marked") {
  ApiV1World w(true);
  const std::string junk(15000, 'x');
  w.call("POST", "/api/v1/pause?id=wf&paused=true&junk=" + junk);
  REQUIRE(w.audit.records.size() == 1);
  CHECK(w.audit.records[0].query.size() == AuditFieldLimits::kQuery);
  CHECK(w.audit.records[0].truncated.at("query") == junk.size() + 23);
}

TEST_CASE("Maintenance is stored, keeps its since when set again and answers the running slots") {
  ApiV1World w;
  auto off = w.call_json("GET", "/api/v1/maintenance");
  CHECK(off.at("mode") == "off");
  CHECK(off.at("reason").is_null());
  auto drain = w.call_json("POST", "/api/v1/maintenance?mode=drain&reason=patching");
  CHECK(drain.at("mode") == "drain");
  CHECK(drain.at("reason") == "patching");
  CHECK(drain.at("since") == "2015-09-13T13:30:00.000Z");
  auto again = w.call_json("POST", "/api/v1/maintenance?mode=drain");
  CHECK(again.at("since") == "2015-09-13T13:30:00.000Z");
  CHECK(again.at("reason").is_null());
  CHECK(w.db->maintenance()->mode == MaintenanceMode::kDrain);
  CHECK(w.call("POST", "/api/v1/maintenance?mode=sleep").status == 400);
  CHECK(w.call("POST", "/api/v1/maintenance").status == 400);
}

TEST_CASE("Drain submits nothing new but follows running slots, off resumes") {
  ApiV1World w;
  w.call_json("POST", "/scheduler?time=2015-09-13T10:30Z");  // 10:00 READY
  w.call_json("POST", "/scheduler?time=2015-09-13T10:35Z");  // submitted
  REQUIRE(w.service->submitted.size() == 1);
  w.call_json("POST", "/api/v1/maintenance?mode=drain");
  auto step = w.call_json("POST", "/scheduler?time=2015-09-13T11:30Z");  // 11:00 READY
  CHECK(step.at("maintenance") == "drain");
  w.call_json("POST", "/scheduler?time=2015-09-13T11:31Z");
  CHECK(w.service->submitted.size() == 1);
  CHECK(w.call_json("GET", "/api/v1/maintenance").at("running") == 1);
  w.service->set_status(*w.db->get_slot({"wf", make_time(2015, 9, 13, 10)})->value().external_id,
                        ExternalStatus::kSuccess);
  w.call_json("POST", "/scheduler?time=2015-09-13T11:35Z");
  CHECK(w.db->get_slot({"wf", make_time(2015, 9, 13, 10)})->value().status == SlotStatus::kSuccess);
  CHECK(w.call_json("GET", "/api/v1/maintenance").at("running") == 0);
  CHECK(w.service->submitted.size() == 1);  // the READY 11:00 slot waits
  w.call_json("POST", "/api/v1/maintenance?mode=off");
  auto resumed = w.call_json("POST", "/scheduler?time=2015-09-13T11:40Z");
  CHECK_FALSE(resumed.as_object().contains("maintenance"));
  CHECK(w.service->submitted.size() == 2);
}

TEST_CASE("Pause makes steps do nothing while rerun, kill and pause still work") {
  ApiV1World w;
  w.call_json("POST", "/api/v1/maintenance?mode=pause");
  auto step = w.call_json("POST", "/scheduler?time=2015-09-13T12:30Z");
  CHECK(step.at("workflows") == 0);
  CHECK(step.at("maintenance") == "pause");
  CHECK(w.service->submitted.empty());
  CHECK(w.call_json("POST", "/kill?id=wf&time=2015-09-13T11:00Z").at("status") == "KILLED");
  CHECK(w.call_json("POST", "/rerun?id=wf&time=2015-09-13T11:00Z").at("status") == "WAITING");
  CHECK(w.call("POST", "/pause?id=wf&paused=true").status == 200);
}

TEST_CASE("Health answers the role and checks, ready is 503 while the workflows load") {
  ApiV1World w;
  auto live = w.call_json("GET", "/health/live");
  CHECK(live.at("status") == "ok");
  auto ready = w.call_json("GET", "/health/ready");
  CHECK(ready.at("role") == "leader");
  CHECK(ready.at("checks").at("workflows") == "ok");
  CHECK(ready.at("checks").at("stateDatabase") == "ok");
}

TEST_CASE("A clock skewed from the database's is a warning in ready and a metric, not a 503") {
  ApiV1World w;
  CHECK_FALSE(w.call_json("GET", "/health/ready").at("checks").as_object().contains("clock"));
  std::chrono::milliseconds skew{-3500};
  Metrics metrics;
  Api api(w.scheduler, ApiOptions{.clock = [] { return kApiV1Now; },
                                  .metrics = &metrics,
                                  .db = w.db.get(),
                                  .clock_skew = [&] { return std::optional(skew); }});
  SerialWorker worker;
  auto handler = make_api_http_handler(api, worker);
  auto send = [&](const std::string& target) {
    HttpServerRequest request;
    request.method = "GET";
    request.target = target;
    REQUIRE(parse_request_target(target, request.path, request.query));
    auto answer = std::make_shared<std::promise<HttpServerResponse>>();
    handler(request, [answer](HttpServerResponse r) { answer->set_value(std::move(r)); });
    return answer->get_future().get();
  };
  auto ready = send("/health/ready");
  CHECK(ready.status == 200);
  CHECK(json::parse(ready.body).at("checks").at("clock") ==
        "warning: this node's clock is 3.5 s ahead of the state database's");
  CHECK(send("/metrics").body.find("\ncelos_clock_skew_seconds -3.500\n") != std::string::npos);
  skew = std::chrono::milliseconds(1900);
  CHECK(json::parse(send("/health/ready").body).at("checks").at("clock") == "ok");
  skew = std::chrono::milliseconds(2100);
  CHECK(json::parse(send("/health/ready").body).at("checks").at("clock") ==
        "warning: this node's clock is 2.1 s behind the state database's");
}

TEST_CASE(
    "Until the gate opens only health, metrics and version answer, the rest waits or times out") {
  ApiV1World w;
  StartupGate gate(std::chrono::milliseconds(200));
  Api api(w.scheduler,
          ApiOptions{.clock = [] { return kApiV1Now; }, .db = w.db.get(), .startup = &gate});
  SerialWorker worker;
  auto handler = make_api_http_handler(api, worker);
  auto send = [&](const std::string& target) {
    HttpServerRequest request;
    request.method = "GET";
    request.target = target;
    REQUIRE(parse_request_target(target, request.path, request.query));
    auto answer = std::make_shared<std::promise<HttpServerResponse>>();
    handler(request, [answer](HttpServerResponse r) { answer->set_value(std::move(r)); });
    return answer->get_future();
  };
  auto ready = send("/health/ready").get();
  CHECK(ready.status == 503);
  CHECK(json::parse(ready.body).at("checks").at("workflows") == "loading");
  CHECK(send("/metrics").get().status == 200);
  CHECK(send("/version").get().status == 200);
  auto timed_out = send("/workflow-list").get();  // the gate's 200 ms pass
  CHECK(timed_out.status == 503);
  CHECK(json::parse(timed_out.body).at("error") == "workflows are loading");
  auto waiting = send("/workflow-list");
  CHECK(waiting.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout);
  gate.open();
  CHECK(waiting.get().status == 200);
  CHECK(send("/health/ready").get().status == 200);
}

}  // namespace
