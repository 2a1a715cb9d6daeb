// Stories of the step's external calls (SPEC §10, §16): refusals, unreachable services,
// jobs recorded but never started, and running slots that leave the window.
#include <atomic>
#include <mutex>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "testing/scheduler_world.h"

using namespace celos;
using celos::testing::FakeExternalService;
using World = celos::testing::SchedulerWorld;
using celos::testing::kStart;
using std::chrono::hours;
using std::chrono::minutes;

TEST_CASE("a submission the service refuses is a failed attempt with the service's message") {
  World w;
  w.add("wf").max_retry_count = 1;
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);  // READY
  w.service->set_refuses(true);
  auto report = w.scheduler.step(now);
  CHECK(report.errors.size() == 1);
  auto slot = w.db->get_slot({"wf", kStart}).value();
  REQUIRE(slot);
  CHECK(slot->status == SlotStatus::kWaiting);
  CHECK(slot->retry_count == 1);
  CHECK(slot->message.value_or("").find("invalid partition") != std::string::npos);
  w.scheduler.step(now);  // READY again
  w.scheduler.step(now);  // refused again: no retries left
  slot = w.db->get_slot({"wf", kStart}).value();
  CHECK(slot->status == SlotStatus::kFailure);
  CHECK(w.service->started.empty());
}

TEST_CASE("an unreachable service leaves the slot READY and is asked once per step") {
  World w;
  w.add("a");
  w.add("b");
  w.service->set_endpoint("oozie http://oozie:11000/oozie");
  const Time now = kStart + hours(2) + minutes(10);
  w.scheduler.step(now);  // two READY slots each
  w.service->set_unreachable(true);
  auto report = w.scheduler.step(now);
  CHECK(report.errors.size() == 2);
  CHECK(w.service->calls().size() == 1);  // b's submit fails at once: the endpoint is down
  CHECK(report.external_calls == 1);
  CHECK(w.status("a", kStart) == SlotStatus::kReady);
  CHECK(w.status("b", kStart) == SlotStatus::kReady);
  w.service->set_unreachable(false);
  w.scheduler.step(now);
  CHECK(w.status("a", kStart) == SlotStatus::kRunning);
  CHECK(w.status("b", kStart) == SlotStatus::kRunning);
}

TEST_CASE("a job recorded RUNNING but never started is started by a later step, once") {
  World w;
  w.add("wf");
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);
  w.scheduler.step(now);
  REQUIRE(w.service->started == std::vector<std::string>{"job-1"});
  w.service->set_status("job-1", ExternalStatus::kSubmitted);  // as after a crash before start
  w.scheduler.step(now);
  CHECK(w.service->started == std::vector<std::string>{"job-1", "job-1"});
  CHECK(w.status("wf", kStart) == SlotStatus::kRunning);
  w.service->set_status("job-1", ExternalStatus::kRunning);
  w.scheduler.step(now);
  CHECK(w.service->started.size() == 2);
  CHECK(w.service->submitted.size() == 1);
}

TEST_CASE("a job's failure message is kept with the slot") {
  World w;
  w.add("wf");
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);
  w.scheduler.step(now);
  w.service->set_status("job-1", ExternalStatus(JobState::kFailure, "job left no exit record"));
  w.scheduler.step(now);
  auto slot = w.db->get_slot({"wf", kStart}).value();
  CHECK(slot->status == SlotStatus::kFailure);
  CHECK(slot->message == "job left no exit record");
}

TEST_CASE("a running job's message (a pod no node takes) is kept with the RUNNING slot") {
  World w;
  w.add("wf");
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);
  w.scheduler.step(now);
  const std::string why = "pod wf-1 is Unschedulable: 0/1 nodes are available";
  w.service->set_status("job-1", ExternalStatus(JobState::kRunning, why));
  w.scheduler.step(now);
  auto slot = w.db->get_slot({"wf", kStart}).value();
  CHECK(slot->status == SlotStatus::kRunning);
  CHECK(slot->message == why);
  w.service->set_status("job-1", ExternalStatus::kSuccess);
  w.scheduler.step(now);
  CHECK(w.status("wf", kStart) == SlotStatus::kSuccess);
}

TEST_CASE("a RUNNING slot is followed after it leaves the seven-day window") {
  World w;
  w.add("wf").strategy = make_serial_strategy(1);
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);
  w.scheduler.step(now);
  REQUIRE(w.status("wf", kStart) == SlotStatus::kRunning);
  // Days later, still running, then far outside the window.
  w.scheduler.step(kStart + hours(24 * 6));
  auto report = w.scheduler.step(kStart + hours(24 * 9));
  CHECK(report.errors.empty());
  CHECK(w.service->submitted.size() == 1);  // still counts against the concurrency of 1
  w.service->set_status("job-1", ExternalStatus::kSuccess);
  w.scheduler.step(kStart + hours(24 * 10));
  CHECK(w.status("wf", kStart) == SlotStatus::kSuccess);
}

TEST_CASE("a slot waiting for its retry time is neither READY nor timed out before it") {
  World w;
  Workflow& wf = w.add("wf");
  wf.wait_timeout_seconds = 60;
  SlotState waiting = SlotState::of({"wf", kStart}, SlotStatus::kWaiting, std::nullopt, 1);
  waiting.retry_at = kStart + hours(1);
  REQUIRE(w.db->put_slots({waiting}));
  w.scheduler.step(kStart + minutes(30));
  CHECK(w.status("wf", kStart) == SlotStatus::kWaiting);
  w.scheduler.step(kStart + hours(1) + minutes(1));
  CHECK(w.status("wf", kStart) == SlotStatus::kReady);
}

TEST_CASE("the step's summary counts its external calls") {
  World w;
  w.add("a");
  w.add("b");
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);
  auto report = w.scheduler.step(now);  // 2 submits + 1 start per workflow group
  CHECK(report.submitted == 2);
  CHECK(report.external_calls == 4);
  CHECK(report.external_call_errors == 0);
  CHECK_FALSE(report.slowest_call.empty());
  CHECK(report.slot_counts[SlotStatus::kRunning] == 2);
  std::vector<std::string> phases;
  for (const auto& phase : report.phases) phases.push_back(phase.first);
  CHECK(phases == std::vector<std::string>{"prefetch", "load+submit", "record", "start", "advance",
                                           "follow", "restart", "deadlines", "write"});
}

namespace {
// Answers status in batches (as Oozie's job list) of at most two jobs, and records each batch.
class PagedStatusService final : public FakeExternalService {
 public:
  ServiceTraits traits() const override {
    return {.batches_status = true, .status_batch_limit = 2};
  }
  std::map<std::string, Result<ExternalStatus>> status_many(const std::vector<Job>& jobs) override {
    {
      std::lock_guard lock(batches_mutex);
      batch_sizes.push_back(jobs.size());
    }
    return FakeExternalService::status_many(jobs);
  }
  std::mutex batches_mutex;
  std::vector<std::size_t> batch_sizes;
};
}  // namespace

TEST_CASE("the RUNNING jobs of one endpoint are asked in batches of the service's limit") {
  World w;
  auto paged = std::make_shared<PagedStatusService>();
  w.service = paged;
  for (const char* id : {"a", "b", "c", "d", "e"}) w.add(id);
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);  // READY
  w.scheduler.step(now);  // RUNNING: job-1 .. job-5
  paged->batch_sizes.clear();
  for (int i = 1; i <= 5; ++i)
    paged->set_status("job-" + std::to_string(i), ExternalStatus::kSuccess);
  w.scheduler.step(now);
  std::sort(paged->batch_sizes.begin(), paged->batch_sizes.end());
  CHECK(paged->batch_sizes == std::vector<std::size_t>{1, 2, 2});
  for (const char* id : {"a", "b", "c", "d", "e"})
    CHECK(w.status(id, kStart) == SlotStatus::kSuccess);
}

namespace {
// A FakeExternalService that starts its jobs in batches (as Slurm's one `scontrol release`).
class BatchStartService final : public FakeExternalService {
 public:
  ServiceTraits traits() const override { return {.batches_start = true}; }
  std::map<std::string, Result<void>> start_many(const std::vector<Job>& jobs) override {
    {
      std::lock_guard lock(batches_mutex);
      batch_sizes.push_back(jobs.size());
    }
    return FakeExternalService::start_many(jobs);
  }
  std::mutex batches_mutex;
  std::vector<std::size_t> batch_sizes;
};

std::string wf_name(int i) { return fmt::format("wf-{:04}", i); }
}  // namespace

TEST_CASE(
    "hundreds of workflows submit, record and start as a pipeline, each job starts after "
    "its RUNNING record") {
  World w;
  auto pool = make_thread_pool_executor(8);
  w.scheduler.set_executor(*pool);
  constexpr int kWorkflows = 600;  // four parts of 150
  for (int i = 0; i < kWorkflows; ++i) w.add(wf_name(i));
  std::atomic<int> started_before_record{0};
  w.service->on_start = [&](const SlotId& slot, const std::string& job) {
    auto stored = w.db->get_slot(slot);
    if (!stored || !stored->has_value() || (*stored)->status != SlotStatus::kRunning ||
        (*stored)->external_id != job) {
      ++started_before_record;
    }
  };
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);  // READY
  auto report = w.scheduler.step(now);
  CHECK(started_before_record == 0);
  CHECK(report.submitted == kWorkflows);
  CHECK(w.service->submitted.size() == kWorkflows);
  CHECK(w.service->started.size() == kWorkflows);
  CHECK(w.status(wf_name(0), kStart) == SlotStatus::kRunning);
  CHECK(w.status(wf_name(599), kStart) == SlotStatus::kRunning);
  // Overlap: the first part's jobs start before the last part is submitted.
  const auto calls = w.service->calls();
  std::size_t first_start = calls.size(), last_submit = 0;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].starts_with("start ") && first_start == calls.size()) first_start = i;
    if (calls[i].starts_with("submit ")) last_submit = i;
  }
  CHECK(first_start < last_submit);
  std::vector<std::string> phases;
  for (const auto& phase : report.phases) phases.push_back(phase.first);
  CHECK(phases == std::vector<std::string>{"prefetch", "load+submit", "record", "start", "advance",
                                           "follow", "restart", "deadlines", "write"});
}

TEST_CASE(
    "a pipelined step records a failing workflow's part workflow by workflow and starts "
    "the others") {
  World w;
  auto pool = make_thread_pool_executor(8);
  w.scheduler.set_executor(*pool);
  for (int i = 0; i < 600; ++i) w.add(wf_name(i));
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);  // READY
  w.db_fs->fail_writes_under("/db/state/" + wf_name(200) + "/");
  auto report = w.scheduler.step(now);
  CHECK(report.errors.size() == 1);
  CHECK(w.service->submitted.size() == 600);
  CHECK(w.service->started.size() == 599);
  CHECK(w.status(wf_name(200), kStart) == SlotStatus::kReady);
  CHECK(w.status(wf_name(201), kStart) == SlotStatus::kRunning);
}

TEST_CASE("a service that starts in batches starts once after every part is recorded") {
  World w;
  auto batching = std::make_shared<BatchStartService>();
  w.service = batching;
  auto pool = make_thread_pool_executor(8);
  w.scheduler.set_executor(*pool);
  for (int i = 0; i < 300; ++i) w.add(wf_name(i));
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);
  w.scheduler.step(now);
  CHECK(batching->batch_sizes == std::vector<std::size_t>{300});
  const auto calls = batching->calls();
  CHECK(calls.back().starts_with("start "));
  std::size_t submits = 0;
  for (const std::string& c : calls) submits += c.starts_with("submit ") ? 1 : 0;
  CHECK(submits == 300);
  CHECK(w.status(wf_name(299), kStart) == SlotStatus::kRunning);
}
