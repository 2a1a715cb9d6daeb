// Scheduler step benchmark (issue 2): N hourly workflows with a 7-day window on a real state
// directory. Prints the first step (every slot becomes READY and is written), a steady-state
// step (nothing changes) and the peak RSS. Usage: celos_scheduler_bench [N...] [--dir DIR]
// [--history] (record the slot history, as celos-server does) [--compare-history] (both, twice
// each, and the difference of the first steps)
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
#include <unistd.h>

#include "bench_util.h"
#include "celos/scheduler.h"
#include "celos/slot_history.h"
#include "celos/state_db_open.h"

using namespace celos;
using namespace celos::bench;

namespace {

// Times what a listener costs the step (the history recorder's appends).
class TimedListener final : public SchedulerListener {
 public:
  explicit TimedListener(SchedulerListener& inner) : inner_(inner) {}
  void on_slot_changes(const std::vector<SlotChange>& changes) override {
    const auto t0 = std::chrono::steady_clock::now();
    inner_.on_slot_changes(changes);
    ms += ms_since(t0);
  }
  void on_step(const StepReport& report) override {
    const auto t0 = std::chrono::steady_clock::now();
    inner_.on_step(report);
    ms += ms_since(t0);
  }
  double ms = 0;

 private:
  SchedulerListener& inner_;
};

std::string state_db_uri;  // --state-db: empty = the file database under --dir

// --state-db URI: another backend ("{n}" in the URI becomes N: one empty database per size).
std::unique_ptr<StateDatabase> open_bench_database(int n, const std::string& dir) {
  if (state_db_uri.empty()) return make_file_state_database(make_local_file_system(), dir);
  std::string uri = state_db_uri;
  if (auto at = uri.find("{n}"); at != std::string::npos) uri.replace(at, 3, std::to_string(n));
  auto opened = open_state_database(uri);
  if (!opened) {
    std::fprintf(stderr, "%s\n", opened.error().message.c_str());
    std::exit(1);
  }
  return std::move(*opened);
}

// PostgreSQL: the first step of a node that just became leader (a new process: nothing in its
// memory, the window read in bulk).
void new_leader_step(int n, const std::string& dir, WorkflowSource& source, Time now) {
  auto db = open_bench_database(n, dir);
  auto resolver = make_local_file_system_resolver();
  Scheduler scheduler(source, *db, *resolver);
  const auto t0 = std::chrono::steady_clock::now();
  auto report = scheduler.step(now);
  std::printf("          a new leader's first step %7.1f ms (%d changes)\n", ms_since(t0),
              report.changed);
}

// One run in `dir`; answers the first step's time. `keep`: leave the directory for the caller
// to delete (--compare-history deletes only after all its runs: see below).
double run(int n, const std::string& dir, bool history, bool keep = false) {
  std::filesystem::remove_all(dir);
  auto config = hourly_workflows(n, std::make_shared<NullService>());
  auto source = make_static_workflow_source(config);
  std::unique_ptr<StateDatabase> db = open_bench_database(n, dir);
  auto resolver = make_local_file_system_resolver();
  Scheduler scheduler(*source, *db, *resolver);
  // --history: record every change in the slot history, as celos-server does.
  auto recorder = make_history_recorder(*db);
  TimedListener timed(*recorder);
  if (history) scheduler.add_listener(timed);
  const Time now = make_time(2015, 9, 20, 12, 30);

  auto t0 = std::chrono::steady_clock::now();
  auto first = scheduler.step(now);
  const double first_ms = ms_since(t0);
  const double first_history_ms = timed.ms;

  // A server steps once a minute: by then the directories written by the first step are
  // older than the state database's one-second "racy" window. The first steady step reads the
  // files written by the first step into the cache; the second is what a running server pays.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  t0 = std::chrono::steady_clock::now();
  auto steady1 = scheduler.step(now);
  const double steady1_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  auto steady2 = scheduler.step(now);
  const double steady2_ms = ms_since(t0);

  std::printf("%s", history ? "[history] " : "");
  std::printf(
      "N=%-5d first step %8.1f ms (%d slots written)  steady step %7.1f ms "
      "(then %6.1f ms, %d changes)  peak RSS %6.1f MB\n",
      n, first_ms, first.changed, steady1_ms, steady2_ms, steady2.changed + steady1.changed,
      peak_rss_kb() / 1024.0);
  if (history)
    std::printf("          history appends in the first step: %.1f ms\n", first_history_ms);
  if (!state_db_uri.empty()) new_leader_step(n, dir, *source, now);
  if (!keep) std::filesystem::remove_all(dir);
  return first_ms;
}

// --compare-history: without, with, with, without history (so that neither variant always runs
// second), each in a fresh directory, deleting them only after the four runs: ext4 creates files
// slowly for a while after many were deleted, which made back-to-back runs of this bench compare
// the file system's clean-up rather than the history (bench/README.md).
void compare_history(int n, const std::string& base) {
  std::vector<std::string> dirs;
  double without = 0, with = 0;
  for (bool history : {false, true, true, false}) {
    dirs.push_back(fmt::format("{}/celos-bench-{}-{}-{}", base, n, ::getpid(), dirs.size()));
    (history ? with : without) += run(n, dirs.back(), history, /*keep=*/true) / 2;
  }
  std::printf("N=%-5d first step: %.1f ms without history, %.1f ms with (%+.1f %%)\n", n, without,
              with, 100.0 * (with - without) / without);
  for (const std::string& dir : dirs) std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  std::string& state_db = state_db_uri;
  spdlog::set_level(spdlog::level::warn);
  bool history = false, compare = false;
  const BenchArgs args =
      parse_bench_args(argc, argv, [&](const std::string& arg, const char* next) {
        if (arg == "--history") {
          history = true;
          return 1;
        }
        if (arg == "--compare-history") {
          compare = true;
          return 1;
        }
        if (arg == "--state-db" && next) {
          state_db = next;
          return 2;
        }
        return 0;
      });
  for (int n : args.sizes) {
    if (compare) {
      compare_history(n, args.dir);
    } else {
      run(n, fmt::format("{}/celos-bench-{}", args.dir, n), history);
    }
  }
}
