// Backfill benchmark (issue 29). Usage: celos_backfill_bench [N...] [--dir DIR] [--runs R]
//                                      [--seconds S]
//
// 1. Dry run: N hourly workflows, a plan over 30 days (N x 720 slots) on a real file state
//    database, counted as POST /api/v1/backfills?dryRun=true does. Target for N = 1,000
//    (720,000 slots): <= 2 s.
// 2. Live submit delay: 20 workflows on a service whose submit takes 20 ms, one new live slot
//    per workflow per step (the step time moves an hour each step; concurrency 2); the time
//    from a step's start to each live slot's submission, over R steps, without and with a
//    running backfill of those workflows (reprocess all over 30 days, maxRunning 20). Printed:
//    p50, p99 and worst of both. Target: p99 with the backfill within +10 % of without.
// 3. Calls per second at a service with submitsPerSecond set (celos.serviceLimits): 20
//    workflows, 10 slots at a time, a week of READY slots each and a running backfill; steps
//    back to back on the real clock for --seconds S (default 5); the service counts what it
//    receives in each second of the wall clock. Target: never above the limit (5).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "bench_util.h"
#include "celos/backfill.h"
#include "celos/executor.h"
#include "celos/external_service_wrapper.h"
#include "celos/mutex.h"
#include "celos/scheduler.h"
#include "celos/state_db_open.h"

using namespace celos;
using namespace celos::bench;

namespace {

const Time kNow = make_time(2015, 9, 20, 12, 30);

std::shared_ptr<WorkflowConfig> hourly_workflows(int n, ExternalServicePtr service,
                                                 std::shared_ptr<const SchedulingStrategy> s) {
  auto config = std::make_shared<WorkflowConfig>();
  for (int i = 0; i < n; ++i) {
    Workflow w;
    w.id = fmt::format("workflow-{:04}", i);
    w.schedule = make_hourly_schedule();
    w.strategy = s;
    w.trigger = make_always_trigger();
    w.service = service;
    w.start_time = make_time(2015, 1, 1);
    config->workflows[w.id] = w;
  }
  return config;
}

void dry_run(int n, const std::string& dir) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto config = hourly_workflows(n, std::make_shared<NullService>(), std::make_shared<NoPicks>());
  auto db = make_file_state_database(make_local_file_system(), dir);
  BackfillRequest r;
  r.workflows = "workflow-*";
  r.start = kNow - std::chrono::hours(24 * 31);
  r.end = r.start + std::chrono::hours(24 * 30);
  r.dry_run = true;
  r.now = kNow;
  const auto t0 = std::chrono::steady_clock::now();
  auto created = Backfills(*config, *db).create(r);
  const double ms = ms_since(t0);
  if (!created) {
    std::fprintf(stderr, "%s\n", created.error().message.c_str());
    std::exit(1);
  }
  std::printf("dry run    N=%-5d %7zu slots  %8.1f ms\n", n, created->slots, ms);
  std::filesystem::remove_all(dir);
}

// A service whose submit takes 20 ms (the rest answers at once, every job has succeeded);
// records when each live slot (from `live_from` on) was submitted, relative to `step_started`.
class SlowService final : public ExternalServiceWrapper {
 public:
  SlowService() : ExternalServiceWrapper(std::make_shared<NullService>()) {}
  Result<std::string> submit_with(const SlotId& slot, const SubmitContext&) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    MutexLock lock(mutex_);
    if (slot.time >= live_from) {
      delays.push_back(ms_since(step_started));
    } else {
      ++older;  // the backfill's
    }
    return fmt::format("job-{}", next_++);
  }

  std::chrono::steady_clock::time_point step_started;
  Time live_from{};
  std::vector<double> delays;
  int older = 0;

 private:
  Mutex mutex_;
  int next_ = 0;
};

// Counts the submissions it receives per second of the wall clock; its endpoint is limited.
class CountingService final : public ExternalServiceWrapper {
 public:
  CountingService() : ExternalServiceWrapper(std::make_shared<NullService>()) {}
  Result<std::string> submit_with(const SlotId&, const SubmitContext&) override {
    const auto second = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
    MutexLock lock(mutex_);
    ++per_second[second.time_since_epoch().count()];
    return fmt::format("job-{}", next_++);
  }
  std::string limit_endpoint() const override { return "bench limited"; }

  std::map<long long, int> per_second;

 private:
  Mutex mutex_;
  int next_ = 0;
};

void rate_limited(const std::string& dir, double limit, int seconds) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto service = std::make_shared<CountingService>();
  auto config = hourly_workflows(20, service, make_serial_strategy(10));
  config->service_limits["bench limited"] = {.submits_per_second = limit,
                                             .max_concurrent = std::nullopt};
  auto source = make_static_workflow_source(config);
  auto db = make_file_state_database(make_local_file_system(), dir);
  auto resolver = make_local_file_system_resolver();
  Scheduler scheduler(*source, *db, *resolver);
  auto executor = make_thread_pool_executor(32);
  scheduler.set_executor(*executor);
  const auto wall = [] {
    return std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now());
  };
  BackfillRequest r;
  r.workflows = "workflow-*";
  r.start = wall() - std::chrono::hours(24 * 40);
  r.end = r.start + std::chrono::hours(24 * 30);
  r.reprocess = Reprocess::kAll;
  r.max_running = 20;
  r.now = wall();
  (void)Backfills(*scheduler.config(), *db).create(r);
  scheduler.step(wall());  // the week's slots become READY
  service->per_second.clear();
  int steps = 0;
  for (const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
       std::chrono::steady_clock::now() < until; ++steps) {
    scheduler.step(wall());
  }
  int max = 0, total = 0;
  std::string counts;
  for (const auto& [second, n] : service->per_second) {
    max = std::max(max, n);
    total += n;
    counts += fmt::format("{}{}", counts.empty() ? "" : " ", n);
  }
  std::printf(
      "submitsPerSecond %g: max %d submissions in one second at the service (%d over %d "
      "steps in %d s; per second: %s)\n",
      limit, max, total, steps, seconds, counts.c_str());
  std::filesystem::remove_all(dir);
}

struct Delays {
  double p50 = 0, p99 = 0, worst = 0;
  int backfill = 0;  // submissions of the backfill's slots
};

Delays live_delays(const std::string& dir, int runs, bool backfill) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto service = std::make_shared<SlowService>();
  // Three places: the last step's live slot is still RUNNING when this step picks (its end is seen
  // after the submissions), the new live slot takes the second, the backfill the third.
  auto config = hourly_workflows(20, service, make_serial_strategy(3));
  auto source = make_static_workflow_source(config);
  auto db = make_file_state_database(make_local_file_system(), dir);
  auto resolver = make_local_file_system_resolver();
  Scheduler scheduler(*source, *db, *resolver);
  auto executor = make_thread_pool_executor(32);  // celos-server's default --io-concurrency
  scheduler.set_executor(*executor);
  // The window has run: each step brings one live slot each. On the hour: kNow is half past,
  // and slots that are no schedule time would leave the window's real slots to be picked first.
  const Time hour = std::chrono::floor<std::chrono::hours>(kNow);
  std::vector<SlotState> done;
  for (const auto& [id, _] : config->workflows) {
    for (Time t = hour - kSlidingWindow; t <= hour; t += std::chrono::hours(1)) {
      done.push_back(SlotState::of({id, t}, SlotStatus::kSuccess));
    }
  }
  if (!db->put_slots(done)) std::exit(1);
  Time now = kNow;
  if (backfill) {
    BackfillRequest r;
    r.workflows = "workflow-*";
    r.start = kNow - std::chrono::hours(24 * 60);
    r.end = r.start + std::chrono::hours(24 * 30);
    r.reprocess = Reprocess::kAll;
    r.max_running = 20;
    r.now = kNow;
    if (auto created = Backfills(*scheduler.config(), *db).create(r); !created) {
      std::fprintf(stderr, "backfill: %s\n", created.error().message.c_str());
      std::exit(1);
    }
  }
  service->delays.clear();
  for (int i = 0; i < runs; ++i) {
    now += std::chrono::hours(1);
    service->live_from = now - std::chrono::hours(2);
    service->step_started = std::chrono::steady_clock::now();
    scheduler.step(now);
  }
  std::vector<double> d = service->delays;
  std::sort(d.begin(), d.end());
  std::filesystem::remove_all(dir);
  if (d.empty()) return {};
  return {d[d.size() / 2], d[std::min(d.size() - 1, d.size() * 99 / 100)], d.back(),
          service->older};
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  int runs = 50;
  int seconds = 5;
  auto args = parse_bench_args(argc, argv, [&](const std::string& arg, const char* next) {
    if (arg == "--runs" && next) {
      runs = std::atoi(next);
      return 2;
    }
    if (arg == "--seconds" && next) {
      seconds = std::atoi(next);
      return 2;
    }
    return 0;
  });
  const std::string dir = fmt::format("{}/celos-backfill-bench-{}", args.dir, ::getpid());
  for (int n : args.sizes) dry_run(n, dir);
  for (bool backfill : {false, true, false, true}) {
    const Delays d = live_delays(dir, runs, backfill);
    std::printf(
        "live submit delay %-14s p50 %6.1f ms  p99 %6.1f ms  worst %6.1f ms (%d steps; %d "
        "backfill submissions)\n",
        backfill ? "with backfill" : "without", d.p50, d.p99, d.worst, runs, d.backfill);
  }
  rate_limited(dir, 5, seconds);
  return 0;
}
