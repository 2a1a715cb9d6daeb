// Retry back-off: the delay formula and the step's behaviour at explicit times.
#include "model/retry_backoff.h"

#include <catch2/catch.hpp>

#include "celos/scheduler.h"
#include "celos/state_db_open.h"
#include "testing/fakes.h"

using namespace celos;
using celos::testing::FakeExternalService;
using celos::testing::FakeFileSystemResolver;
using celos::testing::MemFileSystem;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

namespace {

const Time kRetryStart = make_time(2015, 9, 13, 0);

Workflow backoff_workflow(std::int64_t delay, double factor, std::int64_t max) {
  Workflow w;
  w.retry_delay_seconds = delay;
  w.retry_backoff_factor = factor;
  w.max_retry_delay_seconds = max;
  return w;
}

}  // namespace

TEST_CASE("the retry delay grows by the factor and is capped") {
  const Workflow w = backoff_workflow(60, 2, 300);
  CHECK(retry_delay(w, 1) == seconds(60));
  CHECK(retry_delay(w, 2) == seconds(120));
  CHECK(retry_delay(w, 3) == seconds(240));
  CHECK(retry_delay(w, 4) == seconds(300));
  CHECK(retry_delay(w, 1000) == seconds(300));
  CHECK(retry_delay(backoff_workflow(0, 2, 3600), 3) == seconds(0));
}

TEST_CASE("a failed slot waits for its retry time: no READY, no WAIT_TIMEOUT, then runs again") {
  auto fs = std::make_shared<MemFileSystem>();
  auto service = std::make_shared<FakeExternalService>();
  auto db = make_file_state_database(fs, "/db");
  FakeFileSystemResolver resolver{fs};
  auto config = std::make_shared<WorkflowConfig>();
  Workflow w = backoff_workflow(600, 2, 3600);
  w.id = "wf";
  w.schedule = make_hourly_schedule();
  w.strategy = make_serial_strategy(1);
  w.trigger = make_always_trigger();
  w.service = service;
  w.start_time = kRetryStart;
  w.max_retry_count = 2;
  w.wait_timeout_seconds = 60;  // would time out at once without the back-off rule
  config->workflows["wf"] = w;
  auto source = make_static_workflow_source(config);
  Scheduler scheduler(*source, *db, resolver);
  const Time t0 = kRetryStart + minutes(30);
  auto status = [&] { return db->get_slot({"wf", kRetryStart}).value().value(); };
  REQUIRE(db->put_slots({SlotState::of({"wf", kRetryStart}, SlotStatus::kRunning, "job-0")}));
  service->set_status("job-0", ExternalStatus::kFailure);
  scheduler.step(t0);
  CHECK(status().status == SlotStatus::kWaiting);
  CHECK(status().retry_count == 1);
  CHECK(status().retry_at == t0 + minutes(10));
  auto tree = scheduler.trigger_status("wf", kRetryStart, t0 + minutes(5));
  REQUIRE(tree);
  CHECK(tree->type == "RetryBackoff");
  CHECK_FALSE(tree->ready);
  CHECK(tree->description == "Retry 1 not before 2015-09-13T00:40:00.000Z");
  REQUIRE(tree->sub_statuses.size() == 1);
  CHECK(tree->sub_statuses[0].type == "AlwaysTrigger");
  scheduler.step(t0 + minutes(9));
  CHECK(status().status == SlotStatus::kWaiting);  // neither READY nor WAIT_TIMEOUT
  scheduler.step(t0 + minutes(10));
  CHECK(status().status == SlotStatus::kReady);
  CHECK(scheduler.trigger_status("wf", kRetryStart, t0 + minutes(10))->type == "AlwaysTrigger");
  scheduler.step(t0 + minutes(11));
  CHECK(status().status == SlotStatus::kRunning);
  CHECK_FALSE(status().retry_at);
  // The second failure waits twice as long; a rerun clears the wait.
  service->set_status(*status().external_id, ExternalStatus::kFailure);
  scheduler.step(t0 + minutes(12));
  CHECK(status().retry_count == 2);
  CHECK(status().retry_at == t0 + minutes(32));
}
