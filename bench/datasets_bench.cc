// Datasets benchmark (issue 16): N consumer workflows, each reading the hourly output of its own
// producer, on a real state directory; the producers never succeed, so every consumer slot of
// the 7-day window waits and its trigger is evaluated on every step. Once with hand-written
// hdfsCheckTriggers on the producer's done flag (local disk), once with `inputs` (the derived
// DatasetTrigger, answered from the state database). Prints the steady step of each.
// Usage: celos_datasets_bench [N...] [--dir DIR]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include "bench_util.h"
#include "celos/dataset.h"
#include "celos/scheduler.h"
#include "celos/state_db_open.h"

using namespace celos;
using namespace celos::bench;

namespace {

double steady_step(int n, const std::string& base, bool datasets) {
  const std::string dir = fmt::format("{}/celos-datasets-bench-{}", base, n);
  std::filesystem::remove_all(dir);
  auto config = std::make_shared<WorkflowConfig>();
  auto service = std::make_shared<NullService>();
  std::vector<DatasetDeclaration> declarations;
  for (int i = 0; i < n; ++i) {
    const std::string data =
        fmt::format("{}/data/p{:04}/${{year}}-${{month}}-${{day}}/${{hour}}", dir, i);
    declarations.push_back(
        {Dataset{fmt::format("d{:04}", i), data, "file:///", "_SUCCESS"}, "b.js", i});
    Workflow p;
    p.id = fmt::format("producer-{:04}", i);
    p.schedule = make_hourly_schedule();
    p.strategy = std::make_shared<NoPicks>();
    p.trigger = make_not_trigger(make_always_trigger());  // never ready: nothing stored
    p.service = service;
    p.outputs = {{declarations.back().dataset.id}};
    config->workflows[p.id] = p;
    Workflow c = p;
    c.id = fmt::format("consumer-{:04}", i);
    c.outputs.clear();
    if (datasets) {
      c.trigger = nullptr;
      c.inputs = {{declarations.back().dataset.id}};
    } else {
      c.trigger = make_hdfs_check_trigger(data + "/_SUCCESS", "file:///");
    }
    config->workflows[c.id] = c;
  }
  link_datasets(*config, declarations);
  auto source = make_static_workflow_source(config);
  auto db = make_file_state_database(make_local_file_system(), dir);
  auto resolver = make_local_file_system_resolver();
  Scheduler scheduler(*source, *db, *resolver);
  const Time now = make_time(2015, 9, 20, 12, 30);
  scheduler.step(now);
  scheduler.step(now);
  const auto t0 = std::chrono::steady_clock::now();
  auto report = scheduler.step(now);
  const double ms = ms_since(t0);
  if (report.changed != 0 || !report.errors.empty()) std::printf("unexpected changes or errors\n");
  std::filesystem::remove_all(dir);
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  const BenchArgs args = parse_bench_args(argc, argv);
  const std::string& base = args.dir;
  for (int n : args.sizes) {
    const double checks = steady_step(n, base, false);
    const double datasets = steady_step(n, base, true);
    std::printf(
        "N=%-5d steady step: hdfsCheckTrigger %8.1f ms   datasets %8.1f ms   peak RSS %6.1f MB\n",
        n, checks, datasets, peak_rss_kb() / 1024.0);
  }
}
