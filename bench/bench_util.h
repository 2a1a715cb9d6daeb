// Pieces the C++ benchmarks share: a service and a strategy that make a step measure the
// scheduler and the state database rather than a job service, a timer, peak RSS, and the
// command line `[--dir DIR] [N...]` (other flags are handed to `extra`).
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <sys/resource.h>

#include "celos/external_service.h"
#include "celos/strategy.h"
#include "celos/workflow.h"

namespace celos::bench {

// A service that is never really asked: every job has succeeded.
class NullService final : public ExternalService {
 public:
  Result<std::string> submit(const SlotId&) override { return std::string("x"); }
  Result<void> start(const SlotId&, const std::string&) override { return {}; }
  Result<ExternalStatus> status(const SlotId&, const std::string&) override {
    return ExternalStatus::kSuccess;
  }
  Result<void> kill(const SlotId&, const std::string&) override { return {}; }
  std::string describe() const override { return "null"; }
  std::string_view kind() const override { return "command"; }
  // As a command: celos writes the done flags of its outputs.
  ServiceTraits traits() const override { return {.writes_done_flags = true}; }
};

// Picks nothing, so that the steady step changes nothing (submitting would measure the service).
class NoPicks final : public SchedulingStrategy {
 public:
  std::vector<SlotState> pick(const std::vector<SlotState>&) const override { return {}; }
  std::string describe() const override { return "none"; }
};

// N hourly workflows "workflow-0000"... with an always-ready trigger, no picks and `service`.
inline std::shared_ptr<WorkflowConfig> hourly_workflows(int n,
                                                        std::shared_ptr<ExternalService> service) {
  auto config = std::make_shared<WorkflowConfig>();
  for (int i = 0; i < n; ++i) {
    Workflow w;
    w.id = fmt::format("workflow-{:04}", i);
    w.schedule = make_hourly_schedule();
    w.strategy = std::make_shared<NoPicks>();
    w.trigger = make_always_trigger();
    w.service = service;
    config->workflows[w.id] = w;
  }
  return config;
}

inline double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

inline long peak_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

struct BenchArgs {
  std::vector<int> sizes;  // default 100 and 1000
  std::string dir = std::filesystem::temp_directory_path();
};

// `extra(argument, next)` takes a flag it knows (returning how many arguments it used: 1 or 2)
// or returns 0 for a size.
inline BenchArgs parse_bench_args(
    int argc, char** argv,
    const std::function<int(const std::string&, const char*)>& extra = nullptr) {
  BenchArgs args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--dir" && next) {
      args.dir = argv[++i];
    } else if (int used = extra ? extra(arg, next) : 0; used > 0) {
      i += used - 1;
    } else {
      args.sizes.push_back(std::atoi(argv[i]));
    }
  }
  if (args.sizes.empty()) args.sizes = {100, 1000};
  return args;
}

}  // namespace celos::bench
