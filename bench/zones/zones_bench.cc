// Schedules in local time (issue 26), bench/README.md "Issue 26":
//   celos_zones_bench property [FIRST LAST]  every zone of the system's tzdata x FIRST-LAST
//                                            (default 1970-2037) x the whole corpus
//   celos_zones_bench preview                10,000 slots previewed, 200 times: median, worst
//   celos_zones_bench step [N] [--dir DIR]   steady steps of N (default 1000) zoned workflows
//                                            against N UTC ones, alternating, median of each
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "bench_util.h"
#include "celos/file_system.h"
#include "celos/scheduler.h"
#include "celos/state_db_open.h"
#include "celos/time_zone.h"
#include "testing/zone_property.h"

using namespace celos;
using namespace celos::bench;

namespace {

std::pair<double, double> median_worst(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.back()};
}

int property(int first, int last) {
  testing::ZonePropertyOptions options;
  options.zones = tzdata_zone_names();
  options.expressions = testing::zone_property_corpus();
  options.first_year = first;
  options.last_year = last;
  const auto t0 = std::chrono::steady_clock::now();
  const auto report = testing::check_zoned_schedules(options);
  std::printf(
      "property: %zu zones x %d-%d x %zu expressions (tzdata %s): %zu checks, %zu slots, "
      "%zu failures, %.1f s\n",
      options.zones.size(), first, last, options.expressions.size(), tzdata_version().c_str(),
      report.windows, report.slots, report.failures.size(), ms_since(t0) / 1000);
  for (const auto& f : report.failures) std::printf("  %s\n", f.c_str());
  return report.failures.empty() ? 0 : 1;
}

void preview_one(const char* what, const Schedule& schedule, Time start, Time end) {
  std::vector<double> ms;
  std::size_t slots = 0;
  for (int i = 0; i < 200; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = preview_schedule(schedule, start, end, ScheduleContext{});
    ms.push_back(ms_since(t0));
    slots = out ? out->size() : 0;
  }
  const auto [median, worst] = median_worst(ms);
  std::printf("preview %-40s %5zu slots: median %.2f ms, worst %.2f ms\n", what, slots, median,
              worst);
}

void preview() {
  const auto paris = *TimeZone::load("Europe/Paris");
  const Time start = make_time(2026, 1, 1);
  // 10,000 hours = 416 days and 16 hours: both changes of 2026.
  preview_one("hourlySchedule, Europe/Paris", *make_hourly_schedule(paris), start,
              start + std::chrono::hours(10000));
  preview_one("hourlySchedule, UTC", *make_hourly_schedule(), start,
              start + std::chrono::hours(10000));
  // A fixed-time expression, 24 slots a day, so that 10,000 slots also cross both changes.
  auto fixed = make_cron_schedule(*CronExpression::parse("0 30 0-23 * * ?"), paris);
  preview_one("0 30 0-23 * * ? (fixed), Europe/Paris", *fixed, start,
              start + std::chrono::hours(10000));
}

double steady_step(Scheduler& scheduler, Time now) {
  const auto t0 = std::chrono::steady_clock::now();
  scheduler.step(now);
  return ms_since(t0);
}

struct StepWorld {
  std::unique_ptr<WorkflowSource> source;
  std::unique_ptr<StateDatabase> db;
  std::unique_ptr<FileSystemResolver> resolver = make_local_file_system_resolver();
  std::unique_ptr<Scheduler> scheduler;
};

StepWorld step_world(int n, const std::string& dir, bool zoned) {
  std::filesystem::remove_all(dir);
  auto config = std::make_shared<WorkflowConfig>();
  auto service = std::make_shared<NullService>();
  const auto paris = *TimeZone::load("Europe/Paris");
  for (int i = 0; i < n; ++i) {
    Workflow w;
    w.id = fmt::format("workflow-{:04}", i);
    // Half interval (hourly), half fixed-time (daily at a minute of its own).
    const auto fixed = *CronExpression::parse(fmt::format("0 {} 6 * * ?", i % 60));
    if (i % 2 == 0) {
      w.schedule = zoned ? make_hourly_schedule(paris) : make_hourly_schedule();
    } else {
      w.schedule = zoned ? make_cron_schedule(fixed, paris) : make_cron_schedule(fixed);
    }
    w.strategy = std::make_shared<NoPicks>();
    w.trigger = make_always_trigger();
    w.service = service;
    config->workflows[w.id] = w;
  }
  StepWorld world;
  world.source = make_static_workflow_source(config);
  world.db = make_file_state_database(make_local_file_system(), dir);
  world.scheduler = std::make_unique<Scheduler>(*world.source, *world.db, *world.resolver);
  return world;
}

void step(int n, const std::string& base) {
  const Time now = make_time(2026, 3, 30, 12, 30);  // the window holds the spring change
  const std::string dir = fmt::format("{}/celos-zones-bench-{}", base, ::getpid());
  auto utc = step_world(n, dir + "-utc", false);
  auto zoned = step_world(n, dir + "-zoned", true);
  utc.scheduler->step(now);  // the first steps write every slot READY
  zoned.scheduler->step(now);
  sleep(2);  // past the file database's racy window
  std::vector<double> utc_ms, zoned_ms;
  for (int i = 0; i < 15; ++i) {
    utc_ms.push_back(steady_step(*utc.scheduler, now));
    zoned_ms.push_back(steady_step(*zoned.scheduler, now));
  }
  const auto [u, uw] = median_worst(utc_ms);
  const auto [z, zw] = median_worst(zoned_ms);
  std::printf(
      "step N=%d: UTC median %.1f ms (worst %.1f), Europe/Paris median %.1f ms (worst "
      "%.1f): %+.1f %%\n",
      n, u, uw, z, zw, 100.0 * (z - u) / u);
  std::filesystem::remove_all(dir + "-utc");
  std::filesystem::remove_all(dir + "-zoned");
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "property") {
    return property(argc > 2 ? std::atoi(argv[2]) : 1970, argc > 3 ? std::atoi(argv[3]) : 2037);
  }
  if (mode == "preview") {
    preview();
    return 0;
  }
  if (mode == "step") {
    int n = 1000;
    std::string dir = std::filesystem::temp_directory_path();
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--dir" && i + 1 < argc) {
        dir = argv[++i];
      } else {
        n = std::atoi(arg.c_str());
      }
    }
    step(n, dir);
    return 0;
  }
  std::fprintf(stderr, "usage: celos_zones_bench property [FIRST LAST] | preview | step [N]\n");
  return 2;
}
