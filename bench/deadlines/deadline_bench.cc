// Deadlines (issue 27) measured:
//
//   celos_deadline_bench step [N...] [--dir DIR] [--steps K]
//     the steady step of N hourly workflows (a 7-day window, 168 open slots each, on a real file
//     state database) without and with `deadline: {after: "PT3H"}`, alternated twice; median
//     and worst of K steps each (target: with deadlines within 10 % of without);
//   celos_deadline_bench replay [--workflows N] [--days D] [--seed S] [--step-minutes M]
//                               [--flags FILE] [--job-events] [--check]
//     the 30-day replay of replay.h: how many misses were flagged AT_RISK at least 15 minutes
//     before their deadline (target >= 80 %), and how many AT_RISK flags ended on time (<= 10 %);
//     with --check, exits 1 when either target is missed (ctest runs it so, on seed 27).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "../bench_util.h"
#include "celos/scheduler.h"
#include "celos/state_db_open.h"
#include "replay.h"

using namespace celos;
using namespace celos::bench;

namespace {

struct StepTimes {
  double first = 0, median = 0, worst = 0;
};

StepTimes run_steps(int n, const std::string& dir, bool deadlines, int steps) {
  std::filesystem::remove_all(dir);
  auto config = hourly_workflows(n, std::make_shared<NullService>());
  for (auto& [id, w] : config->workflows) {
    if (!deadlines) continue;
    w.deadline = DeadlineRule{};
    w.deadline->after = std::chrono::hours(3);
  }
  auto source = make_static_workflow_source(config);
  auto db = make_file_state_database(make_local_file_system(), dir);
  auto resolver = make_local_file_system_resolver();
  Scheduler scheduler(*source, *db, *resolver);
  const Time now = make_time(2015, 9, 20, 12, 30);
  StepTimes t;
  auto t0 = std::chrono::steady_clock::now();
  scheduler.step(now);
  t.first = ms_since(t0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // past the racy window
  scheduler.step(now);  // reads what the first step wrote into the cache
  std::vector<double> took;
  for (int i = 0; i < steps; ++i) {
    t0 = std::chrono::steady_clock::now();
    auto report = scheduler.step(now + std::chrono::seconds(i + 1));
    took.push_back(ms_since(t0));
    if (report.changed != 0) std::fprintf(stderr, "a steady step changed %d\n", report.changed);
  }
  std::sort(took.begin(), took.end());
  t.median = took[took.size() / 2];
  t.worst = took.back();
  std::filesystem::remove_all(dir);
  return t;
}

int step_bench(int argc, char** argv) {
  int steps = 15;
  BenchArgs args = parse_bench_args(argc, argv, [&](const std::string& arg, const char* next) {
    if (arg == "step") return 1;
    if (arg == "--steps" && next) {
      steps = std::atoi(next);
      return 2;
    }
    return 0;
  });
  for (int n : args.sizes) {
    for (int round = 0; round < 2; ++round) {
      for (bool deadlines : {false, true}) {
        const std::string dir = fmt::format("{}/celos-deadline-bench-{}", args.dir, n);
        StepTimes t = run_steps(n, dir, deadlines, steps);
        std::printf(
            "N=%-5d %-16s first step %8.1f ms  steady step median %7.1f ms, worst %7.1f "
            "ms (%d steps)\n",
            n, deadlines ? "with deadlines" : "without", t.first, t.median, t.worst, steps);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

// a of b, in per cent (0 when b is).
double percent(long a, long b) { return b == 0 ? 0.0 : 100.0 * double(a) / double(b); }

// The replay's options from argv[2...]; false (said on stderr) for one it does not know.
bool parse_replay_args(int argc, char** argv, ReplayOptions& options, bool& check) {
  for (int i = 2; i < argc; ++i) {
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    const auto is = [&](const char* name) { return !std::strcmp(argv[i], name); };
    if (is("--job-events")) {
      options.job_events = true;
    } else if (is("--check")) {
      check = true;
    } else if (next && is("--workflows")) {
      options.workflows = std::atoi(argv[++i]);
    } else if (next && is("--days")) {
      options.days = std::atoi(argv[++i]);
    } else if (next && is("--seed")) {
      options.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (next && is("--step-minutes")) {
      options.step_minutes = std::atoi(argv[++i]);
    } else if (next && is("--flags")) {
      options.flags_file = argv[++i];
    } else {
      std::fprintf(stderr, "replay: unknown or incomplete option %s\n", argv[i]);
      return false;
    }
  }
  if (options.step_minutes < 1 || options.workflows < 1 || options.days < 1) {
    std::fprintf(stderr, "replay: --step-minutes, --workflows and --days must be at least 1\n");
    return false;
  }
  return true;
}

void print_replay(const ReplayOptions& options, const ReplayFigures& f) {
  std::printf(
      "replay: %d workflows, %d days, a step every %d min (%ld steps; median %.1f ms, "
      "worst %.1f ms), %ld partial steps at jobs' ends%s\n",
      options.workflows, options.days, options.step_minutes, f.steps, f.step_ms_median,
      f.step_ms_worst, f.event_steps, options.job_events ? " (--job-events)" : "");
  std::printf("slots with a deadline %ld, missed %ld\n", f.slots, f.missed);
  std::printf(
      "misses flagged AT_RISK >= 15 min before the deadline: %ld of %ld = %.1f %% "
      "(target >= 80 %%)\n",
      f.missed_flagged, f.missed, percent(f.missed_flagged, f.missed));
  std::printf("  flagged later: %ld; never flagged: %ld\n", f.missed_flagged_late,
              f.missed_never_flagged);
  std::printf(
      "  not flagged in time, by status when missed: WAITING %ld, READY %ld, RUNNING %ld, other "
      "%ld\n",
      f.unflagged_by_status[0], f.unflagged_by_status[1], f.unflagged_by_status[2],
      f.unflagged_by_status[3]);
  std::printf("AT_RISK flags that ended on time: %ld of %ld = %.1f %% (target <= 10 %%)\n",
              f.flagged_on_time, f.flagged, percent(f.flagged_on_time, f.flagged));
  std::printf("  of which flagged less than 15 min before the deadline: %ld\n",
              f.flagged_on_time_late);
  const char* names[] = {"WAITING", "READY", "RUNNING"};
  for (int k = 0; k < 3; ++k) {
    std::printf("  first flagged while %s: %ld, of which on time %ld\n", names[k],
                f.flagged_by_status[k], f.on_time_by_status[k]);
  }
}

int replay_bench(int argc, char** argv) {
  ReplayOptions options;
  bool check = false;
  if (!parse_replay_args(argc, argv, options, check)) return 2;
  const ReplayFigures f = run_replay(options);
  print_replay(options, f);
  if (!check) return 0;
  const bool early = f.missed > 0 && percent(f.missed_flagged, f.missed) >= 80;
  const bool precise = f.flagged > 0 && percent(f.flagged_on_time, f.flagged) <= 10;
  if (!early) std::printf("check: FAILED, fewer than 80 %% of the misses flagged in time\n");
  if (!precise) std::printf("check: FAILED, more than 10 %% of the flags ended on time\n");
  if (early && precise) std::printf("check: both targets met\n");
  return early && precise ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  if (argc >= 2 && !std::strcmp(argv[1], "replay")) return replay_bench(argc, argv);
  if (argc >= 2 && !std::strcmp(argv[1], "step")) return step_bench(argc, argv);
  std::fprintf(stderr,
               "usage: celos_deadline_bench step [N...] [--dir DIR] [--steps K] | "
               "replay [--workflows N] [--days D] [--seed S] [--step-minutes M] [--flags FILE] "
               "[--job-events] [--check]\n");
  return 2;
}
