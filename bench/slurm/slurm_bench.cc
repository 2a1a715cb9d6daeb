// Slurm status benchmark (issue 15): N RUNNING Slurm slots, a fake runner that answers like
// squeue for N jobs (and counts the processes it would have started). Prints, for each N:
//
//  - status_many: the status part of a step as the step calls it (one batch for the service);
//  - ended: the same when every job has left the queue and left its exit record (squeue knows
//    none of them; the exit files decide);
//  - real squeue: status_many running a real program in place of squeue (a shell script that
//    prints a recorded-style answer for the N jobs), so the cost of starting a process counts;
//  - step: a whole scheduler step over N workflows sharing the service, each with one RUNNING
//    slot (what the scheduler currently does with a batching service).
//
// Target (N = 1,000): the status part <= 200 ms and at most two processes per step.
// Usage: celos_slurm_bench [N...] [--dir DIR]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "../bench_util.h"
#include "celos/file_system.h"
#include "celos/scheduler.h"
#include "celos/slurm_service.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"

using namespace celos;
using namespace celos::bench;

namespace {

// Answers squeue with one `id|RUNNING|None` line per job asked about (or, when `ended`, exits 1
// as Slurm does when it knows none of them). Counts every process it is asked to start.
class SqueueLikeRunner final : public ProcessRunner {
 public:
  Result<ProcessOutput> run(const ProcessRequest& request) override {
    ++processes;
    ProcessOutput out;
    if (request.argv.empty() || !request.argv[0].ends_with("squeue")) return out;
    if (ended) return ProcessOutput{1, "", "slurm_load_jobs error: Invalid job id specified\n"};
    for (const auto& arg : request.argv) {
      if (!arg.starts_with("--jobs=")) continue;
      std::size_t begin = 7;
      while (begin <= arg.size()) {
        const auto end = std::min(arg.find(',', begin), arg.size());
        out.out += arg.substr(begin, end - begin) + "|RUNNING|None\n";
        begin = end + 1;
      }
    }
    return out;
  }
  std::atomic<int> processes{0};
  bool ended = false;
};

struct Setup {
  std::string dir;
  std::shared_ptr<SqueueLikeRunner> runner = std::make_shared<SqueueLikeRunner>();
  ExternalServicePtr service;
  std::vector<ExternalService::Job> jobs;
  WorkflowConfigPtr config;
};

Setup make_setup(int n, const std::string& base, Time slot_time) {
  Setup s;
  s.dir = fmt::format("{}/celos-slurm-bench-{}", base, n);
  std::filesystem::remove_all(s.dir);
  SlurmServiceOptions options;
  options.script = "true";
  options.jobs_dir = s.dir + "/jobs";
  s.service = make_slurm_external_service(options, s.runner);
  auto config = hourly_workflows(n, s.service);
  for (auto& [id, w] : config->workflows) {
    w.start_time = slot_time;
    s.jobs.push_back({SlotId{id, slot_time}, std::to_string(100000 + s.jobs.size())});
  }
  s.config = config;
  return s;
}

void write_exit_records(const Setup& s) {
  for (const auto& job : s.jobs) {
    const std::string dir = slurm_slot_dir(s.dir + "/jobs", job.slot) + "/" + job.external_id;
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/exit") << "0\n";
  }
}

// status_many with the real process runner and a fake `squeue` program in a --slurm-bin dir.
std::pair<double, std::size_t> real_squeue(const Setup& s) {
  const std::string bin = s.dir + "/bin";
  std::filesystem::create_directories(bin);
  {
    std::ofstream answer(bin + "/answer.txt");
    for (const auto& job : s.jobs) answer << job.external_id << "|RUNNING|None\n";
    std::ofstream script(bin + "/squeue");
    script << "#!/bin/sh\nexec cat " << bin << "/answer.txt\n";
  }
  std::filesystem::permissions(bin + "/squeue", std::filesystem::perms::owner_all);
  SlurmServiceOptions options;
  options.script = "true";
  options.jobs_dir = s.dir + "/jobs";
  options.slurm_bin = bin;
  auto service = make_slurm_external_service(options, make_process_runner());
  const auto t0 = std::chrono::steady_clock::now();
  const auto statuses = service->status_many(s.jobs);
  const double ms = ms_since(t0);
  const std::size_t running = std::count_if(statuses.begin(), statuses.end(), [](const auto& e) {
    return e.second && *e.second == JobState::kRunning;
  });
  return {ms, running};
}

void run(int n, const std::string& base) {
  const Time slot_time = make_time(2015, 9, 20, 12, 0);
  Setup s = make_setup(n, base, slot_time);

  auto t0 = std::chrono::steady_clock::now();
  auto statuses = s.service->status_many(s.jobs);
  const double batch_ms = ms_since(t0);
  const int batch_processes = s.runner->processes.exchange(0);
  const std::size_t running = std::count_if(statuses.begin(), statuses.end(), [](const auto& e) {
    return e.second && *e.second == JobState::kRunning;
  });

  const auto [real_ms, real_running] = real_squeue(s);

  write_exit_records(s);
  s.runner->ended = true;
  t0 = std::chrono::steady_clock::now();
  auto ended = s.service->status_many(s.jobs);
  const double ended_ms = ms_since(t0);
  const int ended_processes = s.runner->processes.exchange(0);
  const std::size_t succeeded = std::count_if(ended.begin(), ended.end(), [](const auto& e) {
    return e.second && *e.second == JobState::kSuccess;
  });
  s.runner->ended = false;

  auto source = make_static_workflow_source(s.config);
  auto db = make_file_state_database(make_local_file_system(), s.dir + "/db");
  std::vector<SlotState> slots;
  for (const auto& job : s.jobs) {
    slots.push_back(SlotState::of(job.slot, SlotStatus::kRunning, job.external_id));
  }
  if (auto put = db->put_slots(slots); !put)
    std::printf("put_slots: %s\n", put.error().message.c_str());
  auto resolver = make_local_file_system_resolver();
  Scheduler scheduler(*source, *db, *resolver);
  const Time now = slot_time + std::chrono::minutes(30);
  scheduler.step(now);  // reads the state into the database's cache
  s.runner->processes = 0;
  t0 = std::chrono::steady_clock::now();
  scheduler.step(now);
  const double step_ms = ms_since(t0);
  const int step_processes = s.runner->processes.exchange(0);

  std::printf(
      "N=%-5d status_many %7.1f ms, %d process(es), %zu running | ended %7.1f ms, "
      "%d process(es), %zu succeeded\n        real squeue %7.1f ms, %zu running | "
      "scheduler step %7.1f ms, %d process(es)\n",
      n, batch_ms, batch_processes, running, ended_ms, ended_processes, succeeded, real_ms,
      real_running, step_ms, step_processes);
  std::filesystem::remove_all(s.dir);
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::err);
  const BenchArgs args = parse_bench_args(argc, argv);
  for (int n : args.sizes) run(n, args.dir);
}
