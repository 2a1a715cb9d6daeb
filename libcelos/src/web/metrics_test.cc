#include "celos/metrics.h"

#include <regex>
#include <sstream>

#include <catch2/catch.hpp>

#include "testing/fakes.h"

namespace {

using namespace celos;
using celos::testing::FakeExternalService;

std::string line_of(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix + " ", 0) == 0) return line.substr(prefix.size() + 1);
  }
  return "<missing " + prefix + ">";
}

TEST_CASE("Every line of /metrics is valid text format 0.0.4 and every metric is declared") {
  Metrics metrics;
  metrics.count_http_request(200);
  metrics.on_external_call("oozie", "submit", 0.02, true);
  const std::string text = metrics.render(nullptr);
  const std::regex sample(
      R"re(^([a-z_]+)(\{[a-z_]+="[^"\\]*"(,[a-z_]+="[^"\\]*")*\})? [0-9.e+-]+$)re");
  const std::regex comment(R"re(^# (HELP|TYPE) ([a-z_]+) .+$)re");
  std::set<std::string> typed;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    INFO(line);
    if (std::regex_match(line, m, comment)) {
      if (m[1] == "TYPE") typed.insert(m[2]);
      continue;
    }
    REQUIRE(std::regex_match(line, m, sample));
    std::string name = m[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s = suffix;
      if (!typed.count(name) && name.size() > s.size() && name.ends_with(s))
        name.resize(name.size() - s.size());
    }
    CHECK(typed.count(name));
  }
  for (const char* name : {"celos_steps_total", "celos_step_duration_seconds", "celos_workflows",
                           "celos_workflow_load_errors", "celos_slots", "celos_submissions_total",
                           "celos_external_call_errors_total",
                           "celos_external_call_duration_seconds", "celos_http_requests_total",
                           "celos_leader", "celos_maintenance", "celos_notifications_dropped_total",
                           "celos_audit_suppressed_total", "celos_webhooks_refused_total"}) {
    CHECK(typed.count(name));
  }
}

TEST_CASE("Slots are counted by status as of the last step, every status and mode exported") {
  Metrics metrics;
  StepReport report;
  report.slot_counts = {{SlotStatus::kWaiting, 4},
                        {SlotStatus::kReady, 1},
                        {SlotStatus::kRunning, 3},
                        {SlotStatus::kSuccess, 5},
                        {SlotStatus::kFailure, 1}};
  report.maintenance = MaintenanceMode::kDrain;
  report.duration = std::chrono::milliseconds(300);
  metrics.on_step(report);
  const std::string text = metrics.render(nullptr);
  CHECK(line_of(text, R"(celos_slots{status="WAITING"})") == "4");
  CHECK(line_of(text, R"(celos_slots{status="RUNNING"})") == "3");
  CHECK(line_of(text, R"(celos_slots{status="KILLED"})") == "0");
  CHECK(line_of(text, R"(celos_maintenance{mode="drain"})") == "1");
  CHECK(line_of(text, R"(celos_maintenance{mode="off"})") == "0");
  CHECK(line_of(text, R"(celos_maintenance{mode="pause"})") == "0");
  CHECK(line_of(text, "celos_steps_total") == "1");
  CHECK(line_of(text, R"(celos_step_duration_seconds_bucket{le="0.25"})") == "0");
  CHECK(line_of(text, R"(celos_step_duration_seconds_bucket{le="0.5"})") == "1");
  CHECK(line_of(text, R"(celos_step_duration_seconds_bucket{le="+Inf"})") == "1");
  CHECK(metrics.running_slots() == 3);
  SECTION("an API kill between steps moves a slot out of RUNNING") {
    SlotState from = SlotState::waiting(SlotId{"a", Time{}});
    from.status = SlotStatus::kRunning;
    SlotState to = from;
    to.status = SlotStatus::kKilled;
    metrics.on_slot_changes({SlotChange{from, to, Time{}, "api"}});
    CHECK(metrics.running_slots() == 2);
    CHECK(line_of(metrics.render(nullptr), R"(celos_slots{status="KILLED"})") == "1");
  }
}

TEST_CASE("The service decorator times calls, counts submissions and errors by kind") {
  Metrics metrics;
  auto fake = std::make_shared<FakeExternalService>();
  auto service = instrument_service(fake, metrics);
  CHECK(service->kind() == "oozie");
  const SlotId slot{"wf", Time{}};
  auto id = service->submit(slot);
  REQUIRE(id);
  CHECK(fake->submitted.size() == 1);
  (void)service->start(slot, *id);
  fake->set_down(true);
  CHECK_FALSE(service->submit(slot));
  const std::string text = metrics.render(nullptr);
  CHECK(line_of(text, R"(celos_submissions_total{service="oozie"})") == "1");
  CHECK(line_of(text, R"(celos_external_call_errors_total{service="oozie"})") == "1");
  CHECK(line_of(
            text,
            R"(celos_external_call_duration_seconds_count{service="oozie",operation="submit"})") ==
        "2");
  CHECK(
      line_of(text,
              R"(celos_external_call_duration_seconds_count{service="oozie",operation="start"})") ==
      "1");
  CHECK(
      line_of(text,
              R"(celos_external_call_duration_seconds_count{service="slurm",operation="kill"})") ==
      "0");
}

TEST_CASE("HTTP answers are counted by status code") {
  Metrics metrics;
  metrics.count_http_request(200);
  metrics.count_http_request(200);
  metrics.count_http_request(404);
  const std::string text = metrics.render(nullptr);
  CHECK(line_of(text, R"(celos_http_requests_total{code="200"})") == "2");
  CHECK(line_of(text, R"(celos_http_requests_total{code="404"})") == "1");
  CHECK(line_of(text, "celos_leader") == "1");
}

}  // namespace

namespace {
class BatchingService final : public FakeExternalService {
 public:
  ServiceTraits traits() const override {
    return {.batches_status = true, .batches_start = true, .status_batch_limit = 50};
  }
};
}  // namespace

TEST_CASE("The service decorator keeps the endpoint and batching of the service it measures") {
  Metrics metrics;
  auto fake = std::make_shared<BatchingService>();
  fake->set_endpoint("oozie http://a:11000/oozie");
  auto service = instrument_service(fake, metrics);
  CHECK(service->endpoint() == "oozie http://a:11000/oozie");
  CHECK(service->traits().batches_status);
  CHECK(service->traits().batches_start);
  CHECK(service->traits().status_batch_limit == 50);
  auto plain = instrument_service(std::make_shared<FakeExternalService>(), metrics);
  CHECK_FALSE(plain->traits().batches_start);
  CHECK(plain->traits().status_batch_limit == 0);
}

namespace {

TEST_CASE("Service limits' deferred picks add up by endpoint and limit, running plans' slots") {
  Metrics metrics;
  const std::string none = metrics.render(nullptr);
  CHECK(line_of(none, R"(celos_backfills{state="running"})") == "0");
  CHECK(none.find("celos_service_limit_deferred_total{") == std::string::npos);
  StepReport report;
  report.limit_deferred = {{{"oozie http://o:11000/oozie", ServiceLimit::kSubmitsPerSecond}, 4},
                           {{"slurm \"q\"", ServiceLimit::kMaxConcurrent}, 2}};
  BackfillPlan running;
  running.id = "bf-1";
  running.total = 10;
  running.in_flight = {SlotId{"a", Time{}}, SlotId{"a", Time{} + std::chrono::hours(1)}};
  running.ended = {{SlotStatus::kSuccess, 3}, {SlotStatus::kFailure, 1}};
  BackfillPlan done = running;
  done.id = "bf-0";
  done.state = BackfillState::kDone;
  report.backfills = {running, done};
  report.backfill_admitted = 6;
  metrics.on_step(report);
  report.backfill_admitted = 1;
  metrics.on_step(report);
  const std::string text = metrics.render(nullptr);
  CHECK(
      line_of(
          text,
          R"(celos_service_limit_deferred_total{endpoint="oozie http://o:11000/oozie",limit="submitsPerSecond"})") ==
      "8");
  CHECK(
      line_of(
          text,
          R"(celos_service_limit_deferred_total{endpoint="slurm \"q\"",limit="maxConcurrent"})") ==
      "4");
  CHECK(line_of(text, R"(celos_backfills{state="running"})") == "1");
  CHECK(line_of(text, R"(celos_backfills{state="done"})") == "1");
  CHECK(line_of(text, R"(celos_backfill_slots{plan="bf-1",state="total"})") == "10");
  CHECK(line_of(text, R"(celos_backfill_slots{plan="bf-1",state="PENDING"})") == "4");
  CHECK(line_of(text, R"(celos_backfill_slots{plan="bf-1",state="IN_FLIGHT"})") == "2");
  CHECK(line_of(text, R"(celos_backfill_slots{plan="bf-1",state="SUCCESS"})") == "3");
  CHECK(text.find("plan=\"bf-0\"") == std::string::npos);  // done plans: only counted
  CHECK(line_of(text, "celos_backfill_slots_admitted_total") == "7");
}

}  // namespace
