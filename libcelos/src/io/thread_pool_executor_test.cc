// The thread pool and the scheduler running its calls concurrently (run under the tsan preset).
#include <atomic>
#include <condition_variable>
#include <mutex>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "celos/executor.h"
#include "testing/scheduler_world.h"

using namespace celos;
using celos::testing::FakeExternalService;
using World = celos::testing::SchedulerWorld;
using celos::testing::kStart;
using std::chrono::hours;
using std::chrono::minutes;

TEST_CASE("the pool runs every task, several at once but never more than its width") {
  auto pool = make_thread_pool_executor(4);
  std::atomic<int> in_flight{0}, max_in_flight{0}, done{0};
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::function<void()>> tasks;
  for (int i = 0; i < 40; ++i) {
    tasks.push_back([&] {
      const int now = ++in_flight;
      for (int seen = max_in_flight.load();
           now > seen && !max_in_flight.compare_exchange_weak(seen, now);) {
      }
      {
        // The first tasks wait (bounded) until a second one runs: proof of overlap.
        std::unique_lock lock(m);
        cv.notify_all();
        cv.wait_for(lock, std::chrono::seconds(5),
                    [&] { return in_flight.load() >= 2 || done > 0; });
      }
      --in_flight;
      ++done;
      cv.notify_all();
    });
  }
  pool->run_all(std::move(tasks));
  CHECK(done == 40);
  CHECK(max_in_flight >= 2);
  CHECK(max_in_flight <= 4);
  CHECK(pool->width() == 4);
}

TEST_CASE("a width outside 1..1024 is refused") {
  CHECK_THROWS(make_thread_pool_executor(0));
  CHECK_THROWS(make_thread_pool_executor(1025));
  CHECK(make_thread_pool_executor(1)->width() == 1);
}

TEST_CASE("with concurrent calls RUNNING is stored before start and picks keep their order") {
  World w;
  auto pool = make_thread_pool_executor(8);
  w.scheduler.set_executor(*pool);
  for (int i = 0; i < 30; ++i) w.add(fmt::format("wf{:02}", i)).strategy = make_serial_strategy(3);
  std::atomic<int> started_before_record{0};
  w.service->on_start = [&](const SlotId& slot, const std::string& job) {
    auto stored = w.db->get_slot(slot);
    if (!stored || !*stored || (*stored)->status != SlotStatus::kRunning ||
        (*stored)->external_id != job) {
      ++started_before_record;
    }
  };
  const Time now = kStart + hours(5) + minutes(1);
  w.scheduler.step(now);  // 5 READY slots each
  auto report = w.scheduler.step(now);
  CHECK(report.errors.empty());
  CHECK(report.submitted == 90);
  CHECK(started_before_record == 0);
  CHECK(w.service->started.size() == 90);
  // Per workflow, the oldest three slots, submitted in order.
  std::map<std::string, std::vector<Time>> by_workflow;
  for (const SlotId& s : w.service->submitted) by_workflow[s.workflow].push_back(s.time);
  for (const auto& [id, times] : by_workflow) {
    CHECK(times == std::vector<Time>{kStart, kStart + hours(1), kStart + hours(2)});
  }
}

TEST_CASE("with concurrent calls a failing workflow delays only itself") {
  World w;
  auto pool = make_thread_pool_executor(4);
  w.scheduler.set_executor(*pool);
  for (int i = 0; i < 10; ++i) w.add(fmt::format("ok{}", i));
  auto broken = std::make_shared<FakeExternalService>();
  broken->set_down(true);
  w.add("broken").service = broken;
  const Time now = kStart + minutes(10);
  w.scheduler.step(now);
  auto report = w.scheduler.step(now);
  CHECK(report.errors.size() == 1);
  CHECK(w.status("broken", kStart) == SlotStatus::kReady);
  for (int i = 0; i < 10; ++i)
    CHECK(w.status(fmt::format("ok{}", i), kStart) == SlotStatus::kRunning);
  for (const auto& [job, _] : w.service->statuses)
    w.service->set_status(job, ExternalStatus::kSuccess);
  w.scheduler.step(now);
  for (int i = 0; i < 10; ++i)
    CHECK(w.status(fmt::format("ok{}", i), kStart) == SlotStatus::kSuccess);
}
