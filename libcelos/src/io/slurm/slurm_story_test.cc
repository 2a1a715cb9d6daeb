// Scheduler stories with the real Slurm service: the real scheduler and file state database (in
// memory), and a fake runner that plays a tiny Slurm (sbatch hands out ids of held jobs,
// scontrol release starts them, squeue answers in the recorded format). Counts processes: one
// scontrol release for the jobs a step starts, one squeue for the RUNNING Slurm slots of a step.
#include <catch2/catch.hpp>

#include "celos/scheduler.h"
#include "celos/slurm_service.h"
#include "testing/fake_process_runner.h"
#include "testing/scheduler_world.h"

namespace celos {
namespace {

using testing::FakeProcessRunner;
using testing::kStart;

std::vector<std::string> split_ids(const std::string& list) {
  std::vector<std::string> ids;
  std::size_t begin = 0;
  while (begin <= list.size()) {
    const auto end = std::min(list.find(',', begin), list.size());
    ids.push_back(list.substr(begin, end - begin));
    begin = end + 1;
  }
  return ids;
}

// A tiny Slurm: job id -> state ("HELD" for a job submitted with --hold).
struct TinySlurm {
  std::map<std::string, std::string> jobs;
  int next = 100;

  void install(FakeProcessRunner& runner) {
    runner.on("sbatch", [this](const ProcessRequest&) -> Result<ProcessOutput> {
      const std::string id = std::to_string(next++);
      jobs[id] = "HELD";
      return ProcessOutput{0, id + "\n", ""};
    });
    runner.on("scontrol", [this](const ProcessRequest& r) -> Result<ProcessOutput> {
      for (const auto& id : split_ids(r.argv.at(2))) {
        if (jobs[id] == "HELD") jobs[id] = "PENDING";
      }
      return ProcessOutput{0, "", ""};
    });
    runner.on("squeue", [this](const ProcessRequest& r) -> Result<ProcessOutput> {
      std::string out;
      for (const auto& id : split_ids(r.argv.at(3).substr(7))) {  // --jobs=...
        const auto found = jobs.find(id);
        if (found == jobs.end()) continue;
        out += found->second == "HELD" ? id + "|PENDING|JobHeldUser\n"
                                       : id + "|" + found->second + "|None\n";
      }
      return ProcessOutput{0, out, ""};
    });
    runner.on("scancel", [this](const ProcessRequest& r) -> Result<ProcessOutput> {
      jobs[r.argv.at(1)] = "CANCELLED";
      return ProcessOutput{0, "", ""};
    });
  }
};

struct SlurmWorld : testing::SchedulerWorld {
  testing::TempDir jobs_dir;
  std::shared_ptr<FakeProcessRunner> runner = std::make_shared<FakeProcessRunner>();
  TinySlurm slurm;
  ExternalServicePtr slurm_service;

  explicit SlurmWorld(int workflows) {
    slurm.install(*runner);
    SlurmServiceOptions options;
    options.script = "echo ${year}";
    options.jobs_dir = jobs_dir.path();
    slurm_service = make_slurm_external_service(options, runner);
    for (int i = 0; i < workflows; ++i) {
      // one service object, as a file reusing `var slurm = ...` has
      add(workflow("wf" + std::to_string(i), slurm_service));
    }
  }
  SlotState slot(const std::string& wf) {
    auto s = db->get_slot({wf, kStart});
    REQUIRE(s);
    REQUIRE(s->has_value());
    return **s;
  }
};

const Time kNow = kStart + std::chrono::minutes(30);

TEST_CASE("Slurm story: a step starts its jobs with one scontrol and asks one squeue") {
  SlurmWorld w(3);
  w.scheduler.step(kNow);  // WAITING -> READY
  w.runner->clear_calls();
  w.scheduler.step(kNow);  // READY -> RUNNING: three sbatch, one release
  CHECK(w.runner->count("sbatch") == 3);
  CHECK(w.runner->count("scontrol") == 1);
  for (const char* wf : {"wf0", "wf1", "wf2"}) {
    CHECK(w.slot(wf).status == SlotStatus::kRunning);
    CHECK(w.slurm.jobs.at(*w.slot(wf).external_id) == "PENDING");  // released
  }
  w.slurm.jobs.at(*w.slot("wf0").external_id) = "COMPLETED";
  w.slurm.jobs.at(*w.slot("wf1").external_id) = "FAILED";
  w.slurm.jobs.at(*w.slot("wf2").external_id) = "RUNNING";
  w.runner->clear_calls();
  w.scheduler.step(kNow);
  CHECK(w.runner->count("squeue") == 1);
  CHECK(w.runner->count() == 1);
  CHECK(w.slot("wf0").status == SlotStatus::kSuccess);
  CHECK(w.slot("wf1").status == SlotStatus::kFailure);
  CHECK(w.slot("wf2").status == SlotStatus::kRunning);
}

TEST_CASE("Slurm story: a RUNNING slot whose job is still held is released by a later step") {
  SlurmWorld w(1);
  // As after a crash between recording RUNNING and `scontrol release`.
  w.slurm.jobs["555"] = "HELD";
  REQUIRE(w.db->put_slots({SlotState::of({"wf0", kStart}, SlotStatus::kRunning, "555")}));
  w.scheduler.step(kNow);
  CHECK(w.slurm.jobs.at("555") == "PENDING");
  CHECK(w.runner->count("scontrol") == 1);
  CHECK(w.slot("wf0").status == SlotStatus::kRunning);
  CHECK(w.runner->count("sbatch") == 0);  // never submitted twice
}

TEST_CASE("Slurm story: a refused sbatch is a failed attempt with Slurm's message") {
  SlurmWorld w(1);
  w.config->workflows["wf0"].max_retry_count = 0;
  w.runner->answer("sbatch", 1, "", FakeProcessRunner::testdata("slurm/sbatch_bad_partition.err"));
  w.scheduler.step(kNow);
  auto report = w.scheduler.step(kNow);
  const SlotState s = w.slot("wf0");
  CHECK(s.status == SlotStatus::kFailure);
  CHECK_THAT(s.message.value_or(""), Catch::Contains("Invalid partition name specified"));
}

}  // namespace
}  // namespace celos
