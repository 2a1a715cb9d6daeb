// The local command service runs real processes here: /bin/sh, echo, sleep.
#include "celos/command_service.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing/temp_dir.h"

namespace celos {
namespace {

using testing::read_text_file;
using testing::TempDir;

const SlotId kCommandServiceSlot{"wordcount", make_time(2015, 9, 13, 13, 0, 0)};

ExternalServicePtr command_service_for(const TempDir& db, std::string command,
                                       std::map<std::string, std::string> env = {},
                                       std::string cwd = "") {
  CommandServiceOptions options;
  options.command = std::move(command);
  options.env = std::move(env);
  options.cwd = std::move(cwd);
  options.db_dir = db.path();
  return make_command_external_service(std::move(options));
}

std::string run(ExternalService& service, const SlotId& slot = kCommandServiceSlot) {
  auto id = service.submit(slot);
  REQUIRE(id);
  auto started = service.start(slot, *id);
  REQUIRE(started);
  return *id;
}

// Waits for the job to end; a generous bound so that a hung job fails the test instead of
// hanging it (this is not a timing assertion).
ExternalStatus wait_for_command_end(ExternalService& service, const std::string& id,
                                    const SlotId& slot = kCommandServiceSlot) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    auto status = service.status(slot, id);
    REQUIRE(status);
    if (*status != ExternalStatus::kRunning) return *status;
    REQUIRE(std::chrono::steady_clock::now() < give_up);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

pid_t recorded_pid(const std::string& job_dir) {
  return static_cast<pid_t>(std::stol(read_text_file(job_dir + "/pid")));
}

// Dead or a zombie that init has not reaped yet.
bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string text;
  std::getline(stat, text);
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() &&
         (text[close + 2] == 'Z' || text[close + 2] == 'X');
}

void wait_until_gone(pid_t pid) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!process_gone(pid)) {
    REQUIRE(std::chrono::steady_clock::now() < give_up);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST_CASE("a command that exits 0 succeeds and its output is kept in the job directory") {
  TempDir db;
  auto service = command_service_for(db, "echo hello; echo oops >&2");
  const std::string id = run(*service);
  CHECK(wait_for_command_end(*service, id) == ExternalStatus::kSuccess);
  const std::string dir = db.path() + "/jobs/wordcount/2015-09-13/13:00:00.000Z/" + id;
  CHECK(command_job_dir(db.path(), kCommandServiceSlot, id) == dir);
  CHECK(read_text_file(dir + "/stdout") == "hello\n");
  CHECK(read_text_file(dir + "/stderr") == "oops\n");
  CHECK(read_text_file(dir + "/exit") == "0\n");
  CHECK(read_text_file(dir + "/command") == "echo hello; echo oops >&2\n");
  CHECK_FALSE(std::filesystem::exists(dir + "/exit.tmp"));
}

TEST_CASE("a command that exits non-zero fails and the exit status is recorded") {
  TempDir db;
  auto service = command_service_for(db, "echo partial; exit 3");
  const std::string id = run(*service);
  CHECK(wait_for_command_end(*service, id) == ExternalStatus::kFailure);
  const std::string dir = command_job_dir(db.path(), kCommandServiceSlot, id);
  CHECK(read_text_file(dir + "/exit") == "3\n");
  CHECK(read_text_file(dir + "/stdout") == "partial\n");
}

TEST_CASE("time variables are replaced in the command, the env values and the cwd") {
  TempDir db;
  TempDir work;
  std::filesystem::create_directories(work / "2015-09");
  auto service =
      command_service_for(db, "echo ${year}/${month}/${day}T${hour}:${minute}:${second} $OUT > out",
                          {{"OUT", "day ${day}"}}, work.path() + "/${year}-${month}");
  const std::string id = run(*service);
  REQUIRE(wait_for_command_end(*service, id) == ExternalStatus::kSuccess);
  CHECK(read_text_file(work / "2015-09/out") == "2015/09/13T13:00:00 day 13\n");
}

TEST_CASE("the job's environment carries the slot and the workflow's extra variables") {
  TempDir db;
  auto service = command_service_for(
      db,
      "echo $CELOS_WORKFLOW_ID $CELOS_SLOT_TIME $CELOS_YEAR $CELOS_MONTH $CELOS_DAY $CELOS_HOUR "
      "$CELOS_MINUTE $CELOS_SECOND $GREETING; echo $HOME",
      {{"GREETING", "hi"}});
  const SlotId slot{"env-test", make_time(2015, 1, 2, 3, 4, 5)};
  const std::string id = run(*service, slot);
  REQUIRE(wait_for_command_end(*service, id, slot) == ExternalStatus::kSuccess);
  const char* home = std::getenv("HOME");
  CHECK(read_text_file(command_job_dir(db.path(), slot, id) + "/stdout") ==
        "env-test 2015-01-02T03:04:05.000Z 2015 01 02 03 04 05 hi\n" +
            std::string(home ? home : "") + "\n");
}

TEST_CASE("without a cwd the command runs in its job directory") {
  TempDir db;
  auto service = command_service_for(db, "touch made-here");
  const std::string id = run(*service);
  REQUIRE(wait_for_command_end(*service, id) == ExternalStatus::kSuccess);
  CHECK(
      std::filesystem::exists(command_job_dir(db.path(), kCommandServiceSlot, id) + "/made-here"));
}

TEST_CASE("each run gets its own external id and directory") {
  TempDir db;
  auto service = command_service_for(db, "true");
  auto first = service->submit(kCommandServiceSlot);
  auto second = service->submit(kCommandServiceSlot);
  REQUIRE(first);
  REQUIRE(second);
  CHECK(*first != *second);
  CHECK(std::filesystem::is_directory(command_job_dir(db.path(), kCommandServiceSlot, *first)));
  CHECK(std::filesystem::is_directory(command_job_dir(db.path(), kCommandServiceSlot, *second)));
}

TEST_CASE("a running job is running, and kill terminates its whole process group") {
  TempDir db;
  // The sleep runs in the background of the command's shell: kill must reach it too.
  auto service = command_service_for(db, "sleep 600 & echo $! > sleeper; wait");
  const std::string id = run(*service);
  const std::string dir = command_job_dir(db.path(), kCommandServiceSlot, id);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(dir + "/sleeper") ||
         std::filesystem::file_size(dir + "/sleeper") == 0) {
    REQUIRE(std::chrono::steady_clock::now() < give_up);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto sleeper = static_cast<pid_t>(std::stol(read_text_file(dir + "/sleeper")));
  auto status = service->status(kCommandServiceSlot, id);
  REQUIRE(status);
  CHECK(*status == ExternalStatus::kRunning);

  REQUIRE(service->kill(kCommandServiceSlot, id));
  wait_until_gone(recorded_pid(dir));
  wait_until_gone(sleeper);
  CHECK(wait_for_command_end(*service, id) == ExternalStatus::kFailure);
  CHECK(std::filesystem::exists(dir + "/killed"));
  // Killing again (the job has ended) is not an error.
  CHECK(service->kill(kCommandServiceSlot, id));
}

TEST_CASE("a new service object (a restarted server) reads status from the job directory") {
  TempDir db;
  std::string running_id, done_id;
  {
    auto before_restart = command_service_for(db, "sleep 600");
    running_id = run(*before_restart);
    auto quick = command_service_for(db, "exit 0");
    done_id = run(*quick);
    REQUIRE(wait_for_command_end(*quick, done_id) == ExternalStatus::kSuccess);
  }
  auto after_restart = command_service_for(db, "a different command");
  auto running = after_restart->status(kCommandServiceSlot, running_id);
  REQUIRE(running);
  CHECK(*running == ExternalStatus::kRunning);
  auto done = after_restart->status(kCommandServiceSlot, done_id);
  REQUIRE(done);
  CHECK(*done == ExternalStatus::kSuccess);

  REQUIRE(after_restart->kill(kCommandServiceSlot, running_id));
  wait_until_gone(recorded_pid(command_job_dir(db.path(), kCommandServiceSlot, running_id)));
  CHECK(wait_for_command_end(*after_restart, running_id) == ExternalStatus::kFailure);
}

TEST_CASE("a job whose process is gone without an exit status has failed") {
  TempDir db;
  auto service = command_service_for(db, "true");
  auto id = service->submit(kCommandServiceSlot);
  REQUIRE(id);
  SECTION("its process (of the format without a started record) died with the machine") {
    const pid_t dead = ::fork();
    if (dead == 0) ::_exit(0);
    REQUIRE(dead > 0);
    REQUIRE(::waitpid(dead, nullptr, 0) == dead);
    testing::write_text_file(command_job_dir(db.path(), kCommandServiceSlot, *id) + "/pid",
                             std::to_string(dead) + " 0\n");
    auto status = service->status(kCommandServiceSlot, *id);
    REQUIRE(status);
    CHECK(*status == ExternalStatus::kFailure);
  }
}

TEST_CASE("a job that cannot enter its working directory fails to start with a clear error") {
  TempDir db;
  auto service = command_service_for(db, "true", {}, db.path() + "/no/such/dir");
  auto id = service->submit(kCommandServiceSlot);
  REQUIRE(id);
  auto started = service->start(kCommandServiceSlot, *id);
  REQUIRE_FALSE(started);
  CHECK_THAT(started.error().message, Catch::Contains("no/such/dir"));
  auto status = service->status(kCommandServiceSlot, *id);
  REQUIRE(status);
  CHECK(*status == ExternalStatus::kFailure);
}

TEST_CASE("external ids that would leave the jobs directory are rejected") {
  TempDir db;
  auto service = command_service_for(db, "true");
  CHECK_FALSE(service->status(kCommandServiceSlot, "../../x"));
  CHECK_FALSE(service->kill(kCommandServiceSlot, ".."));
  CHECK_FALSE(service->start(kCommandServiceSlot, ""));
}

TEST_CASE("the service describes itself with its command") {
  TempDir db;
  CHECK(command_service_for(db, "wc -l input")->describe() == "command \"wc -l input\"");
}

TEST_CASE("with a jobs directory of its own, the job directories go there and not under the db") {
  TempDir db, jobs;
  CommandServiceOptions options;
  options.command = "echo shared";
  options.db_dir = db.path();
  options.jobs_dir = jobs.path();
  auto service = make_command_external_service(std::move(options));
  const std::string id = run(*service);
  CHECK(wait_for_command_end(*service, id) == ExternalStatus::kSuccess);
  CHECK(read_text_file(command_job_dir_in(jobs.path(), kCommandServiceSlot, id) + "/stdout") ==
        "shared\n");
  CHECK_FALSE(std::filesystem::exists(db.path() + "/jobs"));
}

}  // namespace
}  // namespace celos

namespace celos {
namespace {

// 10,000 instance paths: about 480 KB joined, far over Linux's 128 KiB per string.
SubmitContext many_inputs(std::size_t count) {
  std::string paths;
  for (std::size_t i = 0; i < count; ++i) {
    paths += fmt::format("{}/data/clicks/2015-09-13/instance-{:06}", i ? "," : "", i);
  }
  SubmitContext context;
  context.variables["inputs.clicks"] = paths;
  context.env["CELOS_INPUT_CLICKS"] = paths;
  return context;
}

}  // namespace

TEST_CASE("a job with 10,000 input paths starts and reads them from its input list file") {
  TempDir db;
  auto service = command_service_for(
      db,
      "printf '%s\\n' \"$CELOS_INPUT_CLICKS\" \"${inputs.clicks}\" > vars; "
      "wc -l < \"$CELOS_INPUT_CLICKS_FILE\" > count; cp ${inputs.clicks.file} copy");
  auto id = service->submit_with(kCommandServiceSlot, many_inputs(10000));
  REQUIRE(id);
  REQUIRE(service->start(kCommandServiceSlot, *id));
  REQUIRE(wait_for_command_end(*service, *id) == ExternalStatus::kSuccess);
  const std::string dir = command_job_dir(db.path(), kCommandServiceSlot, *id);
  const std::string file = dir + "/inputs.clicks";
  CHECK(read_text_file(dir + "/vars") == "@" + file + "\n@" + file + "\n");
  CHECK(read_text_file(dir + "/count") == "10000\n");
  const std::string list = read_text_file(dir + "/copy");
  CHECK(list.starts_with("/data/clicks/2015-09-13/instance-000000\n"));
  CHECK(list.ends_with("/data/clicks/2015-09-13/instance-009999\n"));
}

TEST_CASE("a short input list stays in the variable, and its file is there too") {
  TempDir db;
  auto service = command_service_for(
      db, "echo \"$CELOS_INPUT_CLICKS\" > vars; cat \"$CELOS_INPUT_CLICKS_FILE\"");
  auto id = service->submit_with(kCommandServiceSlot, many_inputs(2));
  REQUIRE(id);
  REQUIRE(service->start(kCommandServiceSlot, *id));
  REQUIRE(wait_for_command_end(*service, *id) == ExternalStatus::kSuccess);
  const std::string dir = command_job_dir(db.path(), kCommandServiceSlot, *id);
  CHECK(read_text_file(dir + "/vars") ==
        "/data/clicks/2015-09-13/instance-000000,/data/clicks/2015-09-13/instance-000001\n");
  CHECK(read_text_file(dir + "/stdout") ==
        "/data/clicks/2015-09-13/instance-000000\n/data/clicks/2015-09-13/instance-000001\n");
}

}  // namespace celos
