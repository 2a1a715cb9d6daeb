// The Slurm service against a fake runner that replays outputs recorded from Slurm 22.05
// (testdata/slurm). The end-to-end tests (test/slurm) run the same service on a real cluster.
#include "celos/slurm_service.h"

#include <cstdlib>
#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "celos/time.h"
#include "testing/fake_process_runner.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

using testing::FakeProcessRunner;
using testing::read_text_file;
using testing::TempDir;
using Job = ExternalService::Job;

const SlotId kSlurmServiceSlot{"wordcount", make_time(2015, 9, 12, 20, 0, 0)};

std::string data(const std::string& name) { return FakeProcessRunner::testdata("slurm/" + name); }

struct SlurmFixture {
  TempDir jobs;
  std::shared_ptr<FakeProcessRunner> runner = std::make_shared<FakeProcessRunner>();
  ExternalServicePtr service;

  explicit SlurmFixture(std::function<void(SlurmServiceOptions&)> adjust = {}) {
    SlurmServiceOptions options;
    options.script = "echo counting ${year}";
    options.jobs_dir = jobs.path();
    options.slurm_bin = "/opt/slurm/bin";
    options.timeout = std::chrono::milliseconds(1234);
    if (adjust) adjust(options);
    service = make_slurm_external_service(options, runner);
  }
  std::string job_dir(const std::string& id, const SlotId& slot = kSlurmServiceSlot) const {
    return slurm_slot_dir(jobs.path(), slot) + "/" + id;
  }
  void record_exit(const std::string& id, const std::string& status,
                   const SlotId& slot = kSlurmServiceSlot) {
    testing::write_text_file(job_dir(id, slot) + "/exit", status + "\n");
  }
};

TEST_CASE("submit runs sbatch --hold with the slot's environment and writes the job directory") {
  SlurmFixture f([](SlurmServiceOptions& o) { o.env = {{"INPUT", "/in/${year}"}}; });
  f.runner->answer("sbatch", 0, "8\n");
  auto id = f.service->submit(kSlurmServiceSlot);
  REQUIRE(id);
  CHECK(*id == "8");
  const auto call = f.runner->calls().at(0);
  CHECK(call.argv.at(0) == "/opt/slurm/bin/sbatch");
  CHECK(call.argv.at(1) == "--parsable");
  CHECK(call.argv.at(2) == "--hold");
  CHECK(call.argv.at(3) == "--job-name=wordcount@2015-09-12T20:00Z");
  CHECK(call.argv.at(4) ==
        "--output=" + slurm_slot_dir(f.jobs.path(), kSlurmServiceSlot) + "/%j/stdout");
  CHECK(call.timeout == std::chrono::milliseconds(1234));
  CHECK(call.env.at("CELOS_WORKFLOW_ID") == "wordcount");
  CHECK(call.env.at("INPUT") == "/in/2015");
  CHECK(call.input.find("\"$d/script\"") != std::string::npos);
  CHECK(read_text_file(f.job_dir("8") + "/script") == "#!/bin/sh\necho counting 2015\n");
  CHECK(std::filesystem::status(f.job_dir("8") + "/script").permissions() ==
        (std::filesystem::status(f.job_dir("8") + "/script").permissions() |
         std::filesystem::perms::owner_exec));
}

TEST_CASE("submit_with hands a slot its dataset inputs in the script and the environment") {
  SlurmFixture f([](SlurmServiceOptions& o) { o.script = "wc -l ${inputs.clicks}"; });
  f.runner->answer("sbatch", 0, "9\n");
  SubmitContext context;
  context.variables["inputs.clicks"] = "/c/1,/c/2";
  context.env["CELOS_INPUT_CLICKS"] = "/c/1,/c/2";
  REQUIRE(f.service->submit_with(kSlurmServiceSlot, context));
  CHECK(f.runner->calls().at(0).env.at("CELOS_INPUT_CLICKS") == "/c/1,/c/2");
  CHECK(read_text_file(f.job_dir("9") + "/script") == "#!/bin/sh\nwc -l /c/1,/c/2\n");
}

TEST_CASE("10,000 input paths reach a Slurm job through a file of its job directory") {
  SlurmFixture f([](SlurmServiceOptions& o) {
    o.script =
        "echo \"$CELOS_INPUT_CLICKS\" > vars; wc -l < \"$CELOS_INPUT_CLICKS_FILE\" > count; "
        "echo ${inputs.clicks} > var";
  });
  f.runner->answer("sbatch", 0, "9\n");
  std::string paths;
  for (int i = 0; i < 10000; ++i)
    paths += fmt::format("{}/data/clicks/instance-{:06}", i ? "," : "", i);
  SubmitContext context;
  context.variables["inputs.clicks"] = paths;
  context.env["CELOS_INPUT_CLICKS"] = paths;
  REQUIRE(f.service->submit_with(kSlurmServiceSlot, context));
  const auto call = f.runner->calls().at(0);
  CHECK_FALSE(call.env.count("CELOS_INPUT_CLICKS"));  // sbatch could not even start with it
  const std::string dir = f.job_dir("9");
  // Run the wrapper as Slurm would, in the job's environment.
  testing::write_text_file(f.jobs.path() + "/wrapper", call.input);
  const std::string run = "env SLURM_JOB_ID=9 sh " + f.jobs.path() + "/wrapper";
  REQUIRE(std::system(run.c_str()) == 0);
  CHECK(read_text_file(dir + "/vars") == "@" + dir + "/inputs.clicks\n");
  CHECK(read_text_file(dir + "/var") == "@" + dir + "/inputs.clicks\n");
  CHECK(read_text_file(dir + "/count") == "10000\n");
  CHECK(read_text_file(dir + "/inputs.clicks").ends_with("/data/clicks/instance-009999\n"));
}

TEST_CASE("a job id with a cluster name is the text before the semicolon") {
  SlurmFixture f;
  f.runner->answer("sbatch", 0, "1234;cluster2\n");
  CHECK(f.service->submit(kSlurmServiceSlot).value() == "1234");
}

TEST_CASE("sbatch refusing the job is a failed attempt with Slurm's message") {
  SlurmFixture f;
  f.runner->answer("sbatch", 1, "", data("sbatch_bad_partition.err"));
  auto id = f.service->submit(kSlurmServiceSlot);
  REQUIRE_FALSE(id);
  CHECK(id.error().code == ErrorCode::kInvalid);
  CHECK(id.error().message.find("Invalid partition name specified") != std::string::npos);
}

TEST_CASE("an unreachable controller or a timeout leaves the slot READY (kFailed)") {
  SlurmFixture f;
  f.runner->answer("sbatch", 1, "", data("sbatch_controller_down.err"));
  f.runner->answer_error("sbatch", "sbatch did not answer within 1.234 s");
  for (int i = 0; i < 2; ++i) {
    auto id = f.service->submit(kSlurmServiceSlot);
    REQUIRE_FALSE(id);
    CHECK(id.error().code == ErrorCode::kFailed);
  }
}

TEST_CASE("start_many releases all jobs of a step with one scontrol") {
  SlurmFixture f;
  f.runner->answer("scontrol", 0, "");
  const auto results = f.service->start_many(
      {{kSlurmServiceSlot, "1"}, {kSlurmServiceSlot, "2"}, {kSlurmServiceSlot, "x;y"}});
  CHECK(f.runner->count() == 1);
  CHECK(f.runner->calls().at(0).argv ==
        std::vector<std::string>{"/opt/slurm/bin/scontrol", "release", "1,2"});
  CHECK(results.at("1"));
  CHECK(results.at("2"));
  CHECK(results.at("x;y").error().code == ErrorCode::kInvalid);
}

TEST_CASE("start_many: a job Slurm does not know is that job's error, finished ones are fine") {
  SlurmFixture f;
  f.runner->answer("scontrol", 1, "", data("release_mixed.err"));
  const auto results = f.service->start_many({{kSlurmServiceSlot, "7"},
                                              {kSlurmServiceSlot, "999"},
                                              {kSlurmServiceSlot, "1"},
                                              {kSlurmServiceSlot, "5"}});
  CHECK(results.at("7"));
  CHECK(results.at("1"));
  CHECK(results.at("5"));
  REQUIRE_FALSE(results.at("999"));
  CHECK(results.at("999").error().message.find("Invalid job id") != std::string::npos);
}

TEST_CASE("start_many with the controller down fails every job (kFailed)") {
  SlurmFixture f;
  f.runner->answer("scontrol", 1, "", "Unable to contact slurm controller (connect failure)\n");
  const auto results = f.service->start_many({{kSlurmServiceSlot, "1"}, {kSlurmServiceSlot, "2"}});
  CHECK(results.at("1").error().code == ErrorCode::kFailed);
  CHECK(results.at("2").error().code == ErrorCode::kFailed);
}

TEST_CASE("status_many asks squeue once for all jobs and maps the states") {
  SlurmFixture f;
  f.runner->answer("squeue", 0, data("squeue_mixed.txt"));
  std::vector<Job> jobs;
  for (const char* id : {"1", "2", "3", "6", "7"}) jobs.push_back({kSlurmServiceSlot, id});
  const auto results = f.service->status_many(jobs);
  CHECK(f.runner->count() == 1);
  const auto argv = f.runner->calls().at(0).argv;
  CHECK(argv == std::vector<std::string>{"/opt/slurm/bin/squeue", "--noheader", "--states=all",
                                         "--jobs=1,2,3,6,7", "--format=%i|%T|%r"});
  CHECK(results.at("1").value() == JobState::kSuccess);
  CHECK(results.at("2").value() == JobState::kFailure);
  CHECK(results.at("2").value().message == "Slurm job 2 ended FAILED (NonZeroExitCode)");
  CHECK(results.at("3").value() == JobState::kFailure);
  CHECK(results.at("6").value() == JobState::kFailure);
  CHECK(results.at("7").value() == JobState::kRunning);
  CHECK(f.service->traits().batches_status);
  CHECK(f.service->traits().writes_done_flags);
  CHECK(f.service->traits().keeps_job_output);
}

TEST_CASE("a held job is submitted (the step starts it), a released pending job is running") {
  SlurmFixture f;
  f.runner->answer("squeue", 0, data("squeue_held.txt"));
  f.runner->answer("squeue", 0, data("squeue_released.txt"));
  CHECK(f.service->status(kSlurmServiceSlot, "1").value() == JobState::kSubmitted);
  CHECK(f.service->status(kSlurmServiceSlot, "1").value() == JobState::kRunning);
}

TEST_CASE("jobs that left the queue: the exit record decides, sacct only when needed") {
  SlurmFixture f;
  f.runner->answer("squeue", 0, data("squeue_running.txt"));
  f.record_exit("10", "0");
  f.record_exit("11", "3");
  const auto results = f.service->status_many(
      {{kSlurmServiceSlot, "7"}, {kSlurmServiceSlot, "10"}, {kSlurmServiceSlot, "11"}});
  CHECK(f.runner->count() == 1);  // no sacct: every job that left has its exit record
  CHECK(results.at("7").value() == JobState::kRunning);
  CHECK(results.at("10").value() == JobState::kSuccess);
  CHECK(results.at("11").value() == JobState::kFailure);
  CHECK(results.at("11").value().message == "Slurm job 11 exited with status 3");
}

TEST_CASE("all jobs unknown to squeue: the exit records decide") {
  SlurmFixture f;
  f.runner->answer("squeue", 1, "", data("squeue_unknown_jobs.err"));
  f.record_exit("10", "0");
  CHECK(f.service->status(kSlurmServiceSlot, "10").value() == JobState::kSuccess);
}

TEST_CASE("a job Slurm forgot with no exit record fails with a message, sacct asked once") {
  SlurmFixture f;
  f.runner->on("squeue", [](const ProcessRequest&) -> Result<ProcessOutput> {
    return ProcessOutput{1, "", data("squeue_unknown_jobs.err")};
  });
  f.runner->answer("sacct", 1, "", data("sacct_disabled.err"));
  const auto first = f.service->status_many({{kSlurmServiceSlot, "20"}, {kSlurmServiceSlot, "21"}});
  CHECK(f.runner->count("sacct") == 1);
  REQUIRE(first.at("20"));
  CHECK(first.at("20").value() == JobState::kFailure);
  CHECK(first.at("20").value().message.find("Slurm no longer knows job 20 and it left no exit "
                                            "record in " +
                                            f.job_dir("20")) == 0);
  // Accounting said it is disabled: later steps do not ask again.
  CHECK(f.service->status(kSlurmServiceSlot, "21").value() == JobState::kFailure);
  CHECK(f.runner->count("sacct") == 1);
}

TEST_CASE("with accounting, sacct answers for jobs that left the queue") {
  SlurmFixture f;
  f.runner->answer("squeue", 1, "", data("squeue_unknown_jobs.err"));
  f.runner->answer("sacct", 0, "30|COMPLETED\n31|CANCELLED by 0\n");
  const auto results = f.service->status_many(
      {{kSlurmServiceSlot, "30"}, {kSlurmServiceSlot, "31"}, {kSlurmServiceSlot, "32"}});
  CHECK(f.runner->count() == 2);
  CHECK(f.runner->calls().at(1).argv.at(4) == "--jobs=30,31,32");
  CHECK(results.at("30").value() == JobState::kSuccess);
  CHECK(results.at("31").value() == JobState::kFailure);
  CHECK(results.at("32").value() == JobState::kFailure);
}

TEST_CASE("squeue failing (controller down, timeout) is every job's error: slots stay RUNNING") {
  SlurmFixture f;
  f.runner->answer("squeue", 1, "", data("squeue_controller_down.err"));
  f.runner->answer_error("squeue", "squeue did not answer within 1.234 s");
  f.record_exit("1", "0");
  for (int i = 0; i < 2; ++i) {
    const auto results =
        f.service->status_many({{kSlurmServiceSlot, "1"}, {kSlurmServiceSlot, "2"}});
    CHECK(results.at("1").error().code == ErrorCode::kFailed);
    CHECK(results.at("2").error().code == ErrorCode::kFailed);
  }
  CHECK(f.runner->count("sacct") == 0);
}

TEST_CASE("after the controller did not answer, calls to it fail at once for a while") {
  SlurmFixture f([](SlurmServiceOptions& o) { o.outage_pause = std::chrono::hours(1); });
  f.runner->answer("sbatch", 1, "", data("sbatch_controller_down.err"));
  REQUIRE_FALSE(f.service->submit(kSlurmServiceSlot));
  const auto statuses = f.service->status_many({{kSlurmServiceSlot, "1"}});
  REQUIRE_FALSE(statuses.at("1"));
  CHECK(statuses.at("1").error().code == ErrorCode::kFailed);
  CHECK_THAT(statuses.at("1").error().message,
             Catch::Contains("not asked: the Slurm controller did not answer a moment ago "
                             "(Batch job submission failed: Unable to contact slurm controller"));
  CHECK(f.runner->count() == 1);  // no squeue was started
  // Another controller (here: another jobs directory) is asked as usual.
  SlurmFixture other;
  other.runner->answer("squeue", 0, data("squeue_running.txt"));
  CHECK(other.service->status(kSlurmServiceSlot, "7").value() == JobState::kRunning);
}

TEST_CASE("a controller that answers again is asked again") {
  SlurmFixture f([](SlurmServiceOptions& o) { o.outage_pause = std::chrono::milliseconds(0); });
  f.runner->answer_error("squeue", "squeue did not answer within 1.234 s");
  f.runner->answer("squeue", 0, data("squeue_running.txt"));
  CHECK_FALSE(f.service->status(kSlurmServiceSlot, "7"));
  CHECK(f.service->status(kSlurmServiceSlot, "7").value() == JobState::kRunning);
  CHECK(f.runner->count("squeue") == 2);
}

TEST_CASE("kill runs scancel, an ended or forgotten job is not an error") {
  SlurmFixture f;
  f.runner->answer("scancel", 0, "");
  f.runner->answer("scancel", 1, "",
                   "scancel: error: Kill job error on job id 9: Invalid job id specified\n");
  f.runner->answer("scancel", 1, "",
                   "scancel: error: Kill job error on job id 9: Unable to contact slurm controller "
                   "(connect failure)\n");
  CHECK(f.service->kill(kSlurmServiceSlot, "9"));
  CHECK(f.service->kill(kSlurmServiceSlot, "9"));
  CHECK_FALSE(f.service->kill(kSlurmServiceSlot, "9"));
  CHECK(f.runner->calls().at(0).argv == std::vector<std::string>{"/opt/slurm/bin/scancel", "9"});
  CHECK_FALSE(f.service->kill(kSlurmServiceSlot, "--signal=KILL"));
  CHECK(f.runner->count() == 3);
}

TEST_CASE("commands are found in PATH without --slurm-bin") {
  SlurmFixture f([](SlurmServiceOptions& o) { o.slurm_bin.clear(); });
  f.runner->answer("scancel", 0, "");
  CHECK(f.service->kill(kSlurmServiceSlot, "9"));
  CHECK(f.runner->calls().at(0).argv.at(0) == "scancel");
  CHECK(f.service->kind() == "slurm");
}

}  // namespace
}  // namespace celos
