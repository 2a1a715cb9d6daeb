// The executor contract (testing/executor_contract.h) against a real Slurm. Hidden from the unit
// run: test/executors/test_executor_contract.py starts a private single-node Slurm (slurmctld,
// slurmd, munged) and runs this binary with "[.slurm-contract]" and SLURM_CONF set.
#include <cstdlib>

#include <catch2/catch.hpp>

#include "celos/process_runner.h"
#include "celos/slurm_service.h"
#include "testing/executor_contract.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

using testing::TempDir;

TEST_CASE("the Slurm service keeps the executor contract", "[.slurm-contract]") {
  const char* conf = std::getenv("SLURM_CONF");
  INFO("SLURM_CONF must name the private cluster's slurm.conf");
  REQUIRE(conf != nullptr);
  TempDir jobs, ledger;
  auto options = [&](std::string partition) {
    SlurmServiceOptions o;
    o.script = testing::contract_job_script(ledger.path());
    o.jobs_dir = jobs.path();
    o.partition = std::move(partition);
    return o;
  };
  auto runner = make_process_runner();
  testing::ExecutorBench bench;
  bench.make_service = [&] { return make_slurm_external_service(options(""), runner); };
  bench.make_refusing_service = [&] {
    return make_slurm_external_service(options("no-such-partition"), runner);
  };
  bench.lose_job = [&](const SlotId&, const std::string& id) {
    ProcessRequest scancel;
    scancel.argv = {"scancel", id};
    auto done = runner->run(scancel);
    REQUIRE(done);
    REQUIRE(done->exit_code == 0);
  };
  bench.starts = [&](const SlotId& slot) { return testing::ledger_starts(ledger.path(), slot); };
  testing::check_executor_contract(bench, "slurm");
}

}  // namespace
}  // namespace celos
