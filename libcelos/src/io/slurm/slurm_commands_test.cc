// Parsers and argument vectors of the Slurm service against outputs recorded from Slurm 22.05.
#include "io/slurm/slurm_commands.h"

#include <catch2/catch.hpp>

#include "celos/time.h"
#include "testing/fake_process_runner.h"

namespace celos {
namespace {

using testing::FakeProcessRunner;

const SlotId kSlot{"wordcount", make_time(2015, 9, 12, 20, 0, 0)};

TEST_CASE("slurm states map as SPEC 12 says, unknown states are running") {
  for (const char* s : {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED",
                        "RESIZING", "STAGE_OUT", "SOMETHING_NEW"}) {
    CHECK(slurm_job_state(s) == JobState::kRunning);
  }
  CHECK(slurm_job_state("COMPLETED") == JobState::kSuccess);
  for (const char* s :
       {"FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL",
        "DEADLINE", "SPECIAL_EXIT", "REVOKED", "CANCELLED by 0", "CANCELLED+"}) {
    CHECK(slurm_job_state(s) == JobState::kFailure);
  }
}

TEST_CASE("parse_queue reads squeue's answer as recorded") {
  const auto entries = slurm::parse_queue(FakeProcessRunner::testdata("slurm/squeue_mixed.txt"));
  REQUIRE(entries.size() == 7);
  CHECK(entries.at("3").state == "CANCELLED");
  CHECK(entries.at("3").reason == "JobHeldUser");
  CHECK(entries.at("7").state == "RUNNING");
  CHECK(slurm::parse_queue("12.batch|COMPLETED\nnonsense\n\n").empty());
}

TEST_CASE("parse_job_id takes the text before any semicolon") {
  CHECK(slurm::parse_job_id("8\n") == "8");
  CHECK(slurm::parse_job_id("1234;cluster2\n") == "1234");
  CHECK(slurm::parse_job_id("Submitted batch job 8\n").empty());
  CHECK(slurm::parse_job_id("").empty());
}

TEST_CASE("controller outages are told from refusals") {
  CHECK(slurm::controller_unreachable(
      FakeProcessRunner::testdata("slurm/sbatch_controller_down.err")));
  CHECK(slurm::controller_unreachable(
      FakeProcessRunner::testdata("slurm/squeue_controller_down.err")));
  CHECK_FALSE(
      slurm::controller_unreachable(FakeProcessRunner::testdata("slurm/sbatch_bad_partition.err")));
  CHECK(slurm::invalid_job_id(FakeProcessRunner::testdata("slurm/squeue_unknown_jobs.err")));
  CHECK(slurm::one_line(FakeProcessRunner::testdata("slurm/sbatch_bad_partition.err")) ==
        "invalid partition specified: nope; Batch job submission failed: Invalid partition name "
        "specified");
}

TEST_CASE("per_job_complaints reads scontrol release's answer") {
  const auto complaints =
      slurm::per_job_complaints(FakeProcessRunner::testdata("slurm/release_mixed.err"));
  REQUIRE(complaints.size() == 3);
  CHECK(complaints.at("999") == "Invalid job id specified");
  CHECK(complaints.at("7") == "Job has already finished");
}

TEST_CASE("sbatch arguments: job name, output into the slot directory, options, extra args") {
  SlurmServiceOptions options;
  options.partition = "debug";
  options.time = "01:30:00";
  options.cpus = 4;
  options.mem = "4G";
  options.extra_args = {"--comment=${year}", "--exclusive"};
  const auto args = slurm::sbatch_args(options, kSlot, "/jobs/wc%1");
  CHECK(args ==
        std::vector<std::string>{"--parsable", "--hold", "--job-name=wordcount@2015-09-12T20:00Z",
                                 "--output=/jobs/wc%%1/%j/stdout", "--error=/jobs/wc%%1/%j/stderr",
                                 "--chdir=/jobs/wc%1", "--partition=debug", "--time=01:30:00",
                                 "--cpus-per-task=4", "--mem=4G", "--comment=2015", "--exclusive"});
  const SlotId with_seconds{"wc", make_time(2015, 9, 12, 20, 0, 30)};
  options.cwd = "/data/${year}";
  const auto other = slurm::sbatch_args(options, with_seconds, "/jobs");
  CHECK(other[2] == "--job-name=wc@2015-09-12T20:00:30Z");
  CHECK(other[5] == "--chdir=/data/2015");
}

TEST_CASE("extraArgs refuse what is not one --name[=value] and what celos controls") {
  CHECK(validate_slurm_extra_args({"--exclusive", "--comment=a b", "--nice=5"}));
  for (const char* bad : {"-o", "x", "--", "---x", "--a b", "", "--comment x"}) {
    INFO(bad);
    auto r = validate_slurm_extra_args({bad});
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("is not one --name or --name=value") != std::string::npos);
  }
  for (const char* bad :
       {"--output=/x", "--out=/x", "--error=e", "--chdir=/", "--job-name=x", "--wrap=id",
        "--parsable", "--hold", "--export=ALL", "--uid=0", "--gid=0", "--array=1-3",
        "--dependency=afterok:1", "--input=f", "--export-file=f"}) {
    INFO(bad);
    auto r = validate_slurm_extra_args({bad});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::kInvalid);
    CHECK(r.error().message.find("is set by celos") != std::string::npos);
  }
}

TEST_CASE("the wrapper records the exit status, the script gets a #! line when it has none") {
  const std::string wrapper = slurm::wrapper_script("/jobs/it's", true);
  CHECK(wrapper.find("d='/jobs/it'\\''s'/\"$SLURM_JOB_ID\"") != std::string::npos);
  CHECK(wrapper.find("cd \"$d\"") != std::string::npos);
  CHECK(wrapper.find("mv -f \"$d/exit.tmp\" \"$d/exit\"") != std::string::npos);
  CHECK(slurm::wrapper_script("/jobs", false).find("cd ") == std::string::npos);
  CHECK(slurm::job_script("echo hi") == "#!/bin/sh\necho hi\n");
  CHECK(slurm::job_script("#!/bin/bash\necho hi\n") == "#!/bin/bash\necho hi\n");
}

TEST_CASE("the job environment carries the slot and the workflow's env") {
  const auto env = slurm::job_environment(kSlot, {{"OUT", "/data/${year}"}, {"CELOS_DAY", "x"}});
  CHECK(env.at("CELOS_WORKFLOW_ID") == "wordcount");
  CHECK(env.at("CELOS_SLOT_TIME") == "2015-09-12T20:00:00.000Z");
  CHECK(env.at("CELOS_YEAR") == "2015");
  CHECK(env.at("CELOS_HOUR") == "20");
  CHECK(env.at("OUT") == "/data/2015");
  CHECK(env.at("CELOS_DAY") == "x");
}

}  // namespace
}  // namespace celos
