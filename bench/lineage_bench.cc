// OpenLineage step cost (issue 32): N hourly workflows, each reading one dataset and writing
// another, whose jobs succeed at once; every steady step records one attempt RUNNING (START) and
// ends the previous one (COMPLETE) per workflow: 2N events a step. Measured with lineage off and
// on (the spool on the same disk as the state directory, synced before each write group, and a
// sender thread draining it into a transport that accepts every event), alternating, so that
// both see the same load. Prints the median and worst steady step of each.
// Usage: celos_lineage_bench [N...] [--dir DIR] [--steps K]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "bench_util.h"
#include "celos/dataset.h"
#include "celos/lineage.h"
#include "celos/scheduler.h"
#include "celos/state_db_open.h"

using namespace celos;
using namespace celos::bench;

namespace {

// A collector that takes every event at once (the step's cost, not the network's).
class Accepting final : public LineageTransport {
 public:
  explicit Accepting(std::atomic<long>& sent) : sent_(sent) {}
  Result<void> send(const LineageEvent&) override {
    sent_.fetch_add(1);
    return {};
  }
  std::string describe() const override { return "accepting"; }

 private:
  std::atomic<long>& sent_;
};

std::shared_ptr<WorkflowConfig> workflows(int n, const std::string& dir) {
  auto config = std::make_shared<WorkflowConfig>();
  auto service = std::make_shared<NullService>();
  std::vector<DatasetDeclaration> declarations;
  for (int i = 0; i < n; ++i) {
    for (const char* kind : {"in", "out"}) {
      declarations.push_back(
          {Dataset{
               fmt::format("{}{:04}", kind, i),
               fmt::format("{}/data/{}{:04}/${{year}}-${{month}}-${{day}}/${{hour}}", dir, kind, i),
               "file:///", "_SUCCESS"},
           "b.js", i});
    }
    Workflow w;
    w.id = fmt::format("w{:04}", i);
    w.schedule = make_hourly_schedule();
    w.strategy = make_serial_strategy(1);
    w.trigger = make_always_trigger();
    w.service = service;
    w.start_time = make_time(2015, 9, 13, 0);
    w.inputs = {{fmt::format("in{:04}", i)}};
    w.outputs = {{fmt::format("out{:04}", i)}};
    config->workflows[w.id] = w;
  }
  link_datasets(*config, declarations);
  return config;
}

// The durations of steps 3..steps (each hour's START and COMPLETE of every workflow), in ms.
std::vector<double> steady_steps(int n, const std::string& base, bool lineage, int steps,
                                 long& events) {
  const std::string dir = fmt::format("{}/celos-lineage-bench-{}", base, n);
  std::filesystem::remove_all(dir);
  auto config = workflows(n, dir);
  auto source = make_static_workflow_source(config);
  auto db = make_file_state_database(make_local_file_system(), dir);
  auto resolver = make_local_file_system_resolver();
  Scheduler scheduler(*source, *db, *resolver);
  std::atomic<long> sent{0};
  std::unique_ptr<LineageSpool> spool;
  std::unique_ptr<LineageSender> sender;
  if (lineage) {
    auto opened = LineageSpool::open({make_local_file_system(), dir + "/lineage"}, *db,
                                     [&scheduler] { return scheduler.config(); }, {});
    if (!opened) std::printf("spool: %s\n", opened.error().message.c_str());
    spool = std::move(*opened);
    scheduler.set_outbox(*spool);
    sender = std::make_unique<LineageSender>(*spool, std::make_unique<Accepting>(sent),
                                             LineageSenderOptions{});
    LineageSender* wake = sender.get();
    spool->set_on_pending([wake] { wake->wake(); });
  }
  std::vector<double> out;
  for (int k = 0; k < steps; ++k) {
    const Time now = make_time(2015, 9, 13, 0) + std::chrono::hours(k) + std::chrono::minutes(1);
    const auto t0 = std::chrono::steady_clock::now();
    auto report = scheduler.step(now);
    if (k >= 2) out.push_back(ms_since(t0));
    if (!report.errors.empty()) std::printf("error: %s\n", report.errors.front().c_str());
  }
  if (sender) {
    for (int i = 0; i < 600 && spool->size() > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    sender->stop();
  }
  events = sent.load();
  std::filesystem::remove_all(dir);
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  int steps = 12;
  const BenchArgs args = parse_bench_args(argc, argv, [&](const std::string& a, const char* next) {
    if (a != "--steps" || !next) return 0;
    steps = std::atoi(next);
    return 2;
  });
  for (int n : args.sizes) {
    std::vector<double> off, on;
    long events = 0, ignored = 0;
    for (int round = 0; round < 2; ++round) {  // alternated: off, on, off, on
      auto a = steady_steps(n, args.dir, false, steps, ignored);
      auto b = steady_steps(n, args.dir, true, steps, events);
      off.insert(off.end(), a.begin(), a.end());
      on.insert(on.end(), b.begin(), b.end());
    }
    const double m_off = median(off), m_on = median(on);
    std::printf(
        "N=%-5d steady step: lineage off median %8.1f ms worst %8.1f ms | on median %8.1f ms "
        "worst %8.1f ms (%+.1f %%), %ld events sent in the last run\n",
        n, m_off, *std::max_element(off.begin(), off.end()), m_on,
        *std::max_element(on.begin(), on.end()), 100.0 * (m_on - m_off) / m_off, events);
  }
}
