// A story from workflow file to produced output: a workflow written in JavaScript, its input
// checked on the local disk, its job run by the local command service, stepped by the real
// scheduler over the file state database.
#include <chrono>
#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>

#include "celos/command_service.h"
#include "celos/file_system.h"
#include "celos/scheduler.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"
#include "celos/workflow_loader.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

using testing::read_text_file;
using testing::TempDir;
using testing::write_text_file;

SlotStatus status_at(Scheduler& scheduler, Time slot) {
  auto slots = scheduler.workflow_slots("story", slot, slot + std::chrono::seconds(1));
  REQUIRE(slots);
  REQUIRE(slots->size() == 1);
  return (*slots)[0].status;
}

// Polls for a file a real process writes, for at most a minute (a bound, not a timing check).
void wait_for_file(const std::string& path) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(path)) {
    REQUIRE(std::chrono::steady_clock::now() < give_up);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST_CASE("a JavaScript workflow with a file trigger and a command goes from WAITING to SUCCESS") {
  TempDir root;
  const std::string data = root / "data";
  std::filesystem::create_directories(root / "workflows");
  std::filesystem::create_directories(data);
  write_text_file(root / "workflows/story.js", R"(
var DATA = ")" + data + R"(";
celos.defineWorkflow({
    "id": "story",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.hdfsCheckTrigger(DATA + "/in/${year}-${month}-${day}/${hour}00/_READY", "file:///"),
    "externalService": celos.commandExternalService(
        "mkdir -p out && wc -l < in/${year}-${month}-${day}/${hour}00/input > out/${hour}00.count" +
        " && echo $CELOS_WORKFLOW_ID $CELOS_SLOT_TIME",
        {"cwd": DATA}),
    "startTime": "2015-09-13T13:00Z",
});
)");
  WorkflowLoaderOptions options;
  options.workflows_dir = root / "workflows";
  options.defaults_dir = root / "defaults";
  options.db_dir = root / "db";
  auto source = make_js_workflow_source(options);
  auto db = make_file_state_database(make_local_file_system(), root / "db");
  auto file_systems = make_local_file_system_resolver();
  Scheduler scheduler(*source, *db, *file_systems);

  const Time slot = make_time(2015, 9, 13, 13);
  auto step = [&](int minute) {
    const StepReport report = scheduler.step(make_time(2015, 9, 13, 13, minute));
    INFO((report.errors.empty() ? "" : report.errors[0]));
    CHECK(report.errors.empty());
  };

  step(30);
  CHECK(status_at(scheduler, slot) == SlotStatus::kWaiting);

  write_text_file(data + "/in/2015-09-13/1300/input", "a\nb\nc\n");
  write_text_file(data + "/in/2015-09-13/1300/_READY", "");
  step(31);
  CHECK(status_at(scheduler, slot) == SlotStatus::kReady);

  step(32);
  auto running = scheduler.slot_state("story", slot);
  REQUIRE(running);
  REQUIRE(running->status == SlotStatus::kRunning);
  REQUIRE(running->external_id);

  // The job runs on its own: wait for its exit status.
  const std::string job =
      command_job_dir(options.db_dir, SlotId{"story", slot}, *running->external_id);
  wait_for_file(job + "/exit");
  step(33);
  CHECK(status_at(scheduler, slot) == SlotStatus::kSuccess);
  CHECK(read_text_file(data + "/out/1300.count") == "3\n");
  CHECK(read_text_file(job + "/stdout") == "story 2015-09-13T13:00:00.000Z\n");
}

}  // namespace
}  // namespace celos
