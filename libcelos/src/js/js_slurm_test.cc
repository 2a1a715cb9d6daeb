// celos.slurmExternalService: the options reach sbatch (through a fake runner), and every bad
// option is a load error naming the function and the option.
#include <catch2/catch.hpp>

#include "celos/time.h"
#include "js/js_api.h"
#include "testing/fake_process_runner.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

using testing::FakeProcessRunner;

struct Loaded {
  testing::TempDir db;
  std::shared_ptr<FakeProcessRunner> runner = std::make_shared<FakeProcessRunner>();
  js::FileEvaluation result;

  explicit Loaded(const std::string& call) {
    js::EvalSettings settings;
    settings.db_dir = db.path();
    settings.slurm_bin = "/opt/slurm";
    settings.io_timeout = std::chrono::milliseconds(2500);
    settings.process_runner = runner;
    result = js::evaluate_workflow_file(
        settings, "slurm.js",
        "celos.defineWorkflow({id: 'wc', schedule: celos.hourlySchedule(), "
        "schedulingStrategy: celos.serialSchedulingStrategy(), trigger: celos.alwaysTrigger(), "
        "externalService: " +
            call + "});\n");
  }
  std::string error() const {
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].file == "slurm.js");
    return result.errors[0].message;
  }
};

TEST_CASE("slurmExternalService hands its options to sbatch") {
  Loaded loaded(
      "celos.slurmExternalService('wc -l in > out', {partition: 'debug', "
      "account: 'etl', qos: 'low', time: '01:30:00', cpus: 2, mem: '4G', "
      "cwd: '/data/${year}', env: {IN: '/in/${day}', N: 3}, extraArgs: ['--exclusive']})");
  REQUIRE(loaded.result.errors.empty());
  REQUIRE(loaded.result.workflows.size() == 1);
  auto service = loaded.result.workflows[0].service;
  CHECK(service->kind() == "slurm");
  loaded.runner->answer("sbatch", 0, "42\n");
  const SlotId slot{"wc", make_time(2015, 9, 12, 20, 0, 0)};
  REQUIRE(service->submit(slot).value() == "42");
  const ProcessRequest call = loaded.runner->calls().at(0);
  CHECK(call.argv ==
        std::vector<std::string>{
            "/opt/slurm/sbatch", "--parsable", "--hold", "--job-name=wc@2015-09-12T20:00Z",
            "--output=" + loaded.db.path() + "/jobs/wc/2015-09-12/20:00:00.000Z/%j/stdout",
            "--error=" + loaded.db.path() + "/jobs/wc/2015-09-12/20:00:00.000Z/%j/stderr",
            "--chdir=/data/2015", "--partition=debug", "--account=etl", "--qos=low",
            "--time=01:30:00", "--cpus-per-task=2", "--mem=4G", "--exclusive"});
  CHECK(call.env.at("IN") == "/in/12");
  CHECK(call.env.at("N") == "3");
  CHECK(call.timeout == std::chrono::milliseconds(2500));
}

TEST_CASE("slurmExternalService: bad options are load errors naming the function and option") {
  const std::pair<const char*, const char*> cases[] = {
      {"celos.slurmExternalService()",
       "celos.slurmExternalService: argument script must be a string"},
      {"celos.slurmExternalService(' ')", "argument script must not be empty"},
      {"celos.slurmExternalService('x', 3)", "argument options must be an object, got a number"},
      {"celos.slurmExternalService('x', {partitions: 'a'})",
       "celos.slurmExternalService: unknown option \"partitions\" (known: partition"},
      {"celos.slurmExternalService('x', {bogus: null})", "unknown option \"bogus\""},
      {"celos.slurmExternalService('x', {partition: 3})",
       "option partition must be a string, got a number"},
      {"celos.slurmExternalService('x', {time: ''})", "option time must be a non-empty string"},
      {"celos.slurmExternalService('x', {cpus: '2'})", "option cpus must be a whole number"},
      {"celos.slurmExternalService('x', {cpus: 1.5})", "option cpus must be a whole number"},
      {"celos.slurmExternalService('x', {env: []})", "option env must be an object, got an array"},
      {"celos.slurmExternalService('x', {env: {A: {}}})", "option env: \"A\" must be a string"},
      {"celos.slurmExternalService('x', {env: {SBATCH_PARTITION: 'a'}})",
       "\"SBATCH_PARTITION\" is not allowed"},
      {"celos.slurmExternalService('x', {extraArgs: '--exclusive'})",
       "option extraArgs must be an array"},
      {"celos.slurmExternalService('x', {extraArgs: [3]})", "option extraArgs[0] must be a string"},
      {"celos.slurmExternalService('x', {extraArgs: ['--output=/etc/passwd']})",
       "option extraArgs entry \"--output=/etc/passwd\": --output is set by celos"},
      {"celos.slurmExternalService('x', {extraArgs: ['-p debug']})",
       "is not one --name or --name=value"},
  };
  for (const auto& [call, expected] : cases) {
    INFO(call);
    Loaded loaded(call);
    CHECK_THAT(loaded.error(), Catch::Contains(expected));
    CHECK(loaded.runner->count() == 0);
  }
}

TEST_CASE("slurmExternalService: null options count as not given, jobs dir from settings") {
  Loaded loaded("celos.slurmExternalService('#!/bin/bash\\necho hi', {partition: null})");
  REQUIRE(loaded.result.errors.empty());
  CHECK(loaded.result.workflows[0].service->describe() == "slurm \"script\"");
}

}  // namespace
}  // namespace celos
