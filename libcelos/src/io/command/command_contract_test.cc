// The executor contract (testing/executor_contract.h) against the local command service: real
// processes, their job directories in a temporary database directory.
#include <filesystem>

#include <catch2/catch.hpp>

#include "celos/command_service.h"
#include "testing/executor_contract.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

using testing::TempDir;

CommandServiceOptions options_in(const TempDir& db, const TempDir& ledger) {
  CommandServiceOptions options;
  options.command = testing::contract_job_script(ledger.path());
  options.db_dir = db.path();
  options.kill_grace = std::chrono::milliseconds(500);
  return options;
}

TEST_CASE("the command service keeps the executor contract", "[executor-contract]") {
  TempDir db, ledger;
  testing::ExecutorBench bench;
  bench.make_service = [&] { return make_command_external_service(options_in(db, ledger)); };
  bench.make_refusing_service = [&] {
    // Its jobs directory is a file: no job directory can be made.
    testing::write_text_file(db / "not-a-directory", "");
    CommandServiceOptions options = options_in(db, ledger);
    options.jobs_dir = db / "not-a-directory";
    return make_command_external_service(std::move(options));
  };
  bench.lose_job = [&](const SlotId& slot, const std::string& id) {
    // Ended and its directory removed behind celos's back (another cleaner, a lost disk).
    (void)make_command_external_service(options_in(db, ledger))->kill(slot, id);
    std::filesystem::remove_all(command_job_dir(db.path(), slot, id));
  };
  bench.starts = [&](const SlotId& slot) { return testing::ledger_starts(ledger.path(), slot); };
  bench.timeout = std::chrono::seconds(30);
  testing::check_executor_contract(bench, "command");
}

}  // namespace
}  // namespace celos
