// The command service across crashes (SPEC §16): started records, heartbeats, exactly-once
// starts and kill requests. Real processes (/bin/sh, sleep).
#include "command_job.h"

#include <chrono>
#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <utime.h>

#include "celos/command_service.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

using testing::read_text_file;
using testing::TempDir;
namespace fs = std::filesystem;

const SlotId kSlot{"wordcount", make_time(2015, 9, 13, 13, 0, 0)};

ExternalServicePtr service_for(const TempDir& db, std::string command) {
  CommandServiceOptions options;
  options.command = std::move(command);
  options.db_dir = db.path();
  options.heartbeat_interval = std::chrono::seconds(1);
  return make_command_external_service(std::move(options));
}

ExternalStatus status_of(ExternalService& service, const std::string& id) {
  auto status = service.status(kSlot, id);
  REQUIRE(status);
  return *status;
}

// Polls with a generous bound: a hung job fails the test instead of hanging it.
template <class Predicate>
void wait_until(Predicate done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    REQUIRE(std::chrono::steady_clock::now() < give_up);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

ExternalStatus wait_for_end(ExternalService& service, const std::string& id) {
  ExternalStatus last;
  wait_until([&] {
    last = status_of(service, id);
    return last != ExternalStatus::kRunning && last != ExternalStatus::kSubmitted;
  });
  return last;
}

std::size_t lines_of(const std::string& path) {
  if (!fs::exists(path)) return 0;
  const std::string text = read_text_file(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// A job directory as another host would have left it.
std::string foreign_job(const TempDir& db, ExternalService& service) {
  auto id = service.submit(kSlot);
  REQUIRE(id);
  const std::string dir = command_job_dir(db.path(), kSlot, *id);
  testing::write_text_file(dir + "/started", "host=elsewhere\nboot=b00t\npid=4242\n");
  testing::write_text_file(dir + "/heartbeat", "1\n");
  return *id;
}

void age(const std::string& path, int seconds) {
  const auto then = ::time(nullptr) - seconds;
  struct utimbuf times {
    then, then
  };
  REQUIRE(::utime(path.c_str(), &times) == 0);
}

TEST_CASE("the wrapper records itself before the command runs: host, boot id, pid") {
  TempDir db;
  // The command also waits for the wrapper's first heartbeat (the test's bound catches none).
  auto service =
      service_for(db, "cat started > seen; while [ ! -e heartbeat ]; do sleep 0.01; done");
  auto id = service->submit(kSlot);
  REQUIRE(id);
  REQUIRE(service->start(kSlot, *id));
  CHECK(wait_for_end(*service, *id) == ExternalStatus::kSuccess);
  const std::string dir = command_job_dir(db.path(), kSlot, *id);
  const std::string seen = read_text_file(dir + "/seen");
  const auto& machine = command_job::this_machine();
  CHECK_THAT(seen, Catch::Contains("host=" + machine.host + "\n"));
  CHECK_THAT(seen, Catch::Contains("boot=" + machine.boot + "\n"));
  CHECK(machine.boot.size() == 36);  // a UUID from /proc/sys/kernel/random/boot_id
  auto started = command_job::read_started(dir);
  REQUIRE(started);
  CHECK(started->pid > 1);
}

TEST_CASE("a job never started (a crash between submit and start) is submitted, then runs once") {
  TempDir db;
  auto service = service_for(db, "echo run >> ../../runs");
  auto id = service->submit(kSlot);
  REQUIRE(id);
  CHECK(status_of(*service, *id) == ExternalStatus::kSubmitted);
  REQUIRE(service->start(kSlot, *id));
  CHECK(wait_for_end(*service, *id) == ExternalStatus::kSuccess);
  REQUIRE(service->start(kSlot, *id));  // a later step starting it again does nothing
  REQUIRE(service_for(db, "other")->start(kSlot, *id));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string runs = command_job_dir(db.path(), kSlot, *id) + "/../../runs";
  CHECK(lines_of(runs) == 1);
}

TEST_CASE("a deleted pid file (a crash before it was written) loses nothing") {
  TempDir db;
  auto service = service_for(db, "echo run >> ../../runs; sleep 0.3");
  auto id = service->submit(kSlot);
  REQUIRE(id);
  REQUIRE(service->start(kSlot, *id));
  const std::string dir = command_job_dir(db.path(), kSlot, *id);
  fs::remove(dir + "/pid");
  // The restarted server starts it again: the two wrappers race, one runs the command.
  auto restarted = service_for(db, "echo run >> ../../runs; sleep 0.3");
  REQUIRE(restarted->start(kSlot, *id));
  fs::remove(dir + "/pid");
  CHECK(wait_for_end(*restarted, *id) == ExternalStatus::kSuccess);
  REQUIRE(restarted->start(kSlot, *id));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(lines_of(dir + "/../../runs") == 1);
}

TEST_CASE("many concurrent starts of one job run its command exactly once") {
  TempDir db;
  auto service = service_for(db, "echo run >> ../../runs");
  auto id = service->submit(kSlot);
  REQUIRE(id);
  const std::string dir = command_job_dir(db.path(), kSlot, *id);
  for (int i = 0; i < 8; ++i) {
    REQUIRE(service->start(kSlot, *id));
    fs::remove(dir + "/pid");  // as if each start's server died before recording it
  }
  CHECK(wait_for_end(*service, *id) == ExternalStatus::kSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(lines_of(dir + "/../../runs") == 1);
  CHECK_FALSE(fs::exists(dir + "/exit.tmp"));
}

TEST_CASE("a job of this host whose process ended without an exit status has failed") {
  TempDir db;
  auto service = service_for(db, "true");
  auto id = service->submit(kSlot);
  REQUIRE(id);
  const std::string dir = command_job_dir(db.path(), kSlot, *id);
  const auto& machine = command_job::this_machine();
  testing::write_text_file(dir + "/started",
                           "host=" + machine.host + "\nboot=" + machine.boot + "\npid=1999999\n");
  const ExternalStatus status = status_of(*service, *id);
  CHECK(status == ExternalStatus::kFailure);
  CHECK_THAT(status.message, Catch::Contains("1999999"));
  REQUIRE(service->start(kSlot, *id));  // recorded as started: never started again
  CHECK_FALSE(fs::exists(dir + "/pid"));
}

TEST_CASE("a job of another host runs while its heartbeat is fresh, then fails naming the host") {
  TempDir db;
  auto service = service_for(db, "true");
  const std::string id = foreign_job(db, *service);
  const std::string dir = command_job_dir(db.path(), kSlot, id);
  CHECK(status_of(*service, id) == ExternalStatus::kRunning);
  age(dir + "/heartbeat", 61);
  const ExternalStatus stale = status_of(*service, id);
  CHECK(stale == ExternalStatus::kFailure);
  CHECK_THAT(stale.message, Catch::Contains("elsewhere"));
  testing::write_text_file(dir + "/exit", "0\n");
  CHECK(status_of(*service, id) == ExternalStatus::kSuccess);
}

TEST_CASE("a kill of another host's job is a kill request, obeyed by the job's wrapper") {
  TempDir db;
  auto service = service_for(db, "true");
  const std::string foreign = foreign_job(db, *service);
  REQUIRE(service->kill(kSlot, foreign));
  const std::string foreign_dir = command_job_dir(db.path(), kSlot, foreign);
  CHECK(fs::exists(foreign_dir + "/kill-request"));
  CHECK_FALSE(fs::exists(foreign_dir + "/killed"));

  // The wrapper side: a running job whose kill request comes from elsewhere ends.
  auto sleeper = service_for(db, "sleep 600");
  auto id = sleeper->submit(kSlot);
  REQUIRE(id);
  REQUIRE(sleeper->start(kSlot, *id));
  const std::string dir = command_job_dir(db.path(), kSlot, *id);
  wait_until([&] { return fs::exists(dir + "/heartbeat"); });
  testing::write_text_file(dir + "/kill-request", "2015-09-13T13:00:00.000Z\n");
  const ExternalStatus ended = wait_for_end(*sleeper, *id);
  CHECK(ended == ExternalStatus::kFailure);
  CHECK(read_text_file(dir + "/exit") == "143\n");
}

TEST_CASE("a job killed before it started never starts") {
  TempDir db;
  auto service = service_for(db, "echo run >> ../../runs");
  auto id = service->submit(kSlot);
  REQUIRE(id);
  REQUIRE(service->kill(kSlot, *id));
  REQUIRE(service->start(kSlot, *id));
  const ExternalStatus status = status_of(*service, *id);
  CHECK(status == ExternalStatus::kFailure);
  CHECK_THAT(status.message, Catch::Contains("killed"));
  CHECK_FALSE(fs::exists(command_job_dir(db.path(), kSlot, *id) + "/../../runs"));
}

TEST_CASE("a missing job directory is a failure naming this host") {
  TempDir db;
  auto service = service_for(db, "true");
  const ExternalStatus status = status_of(*service, "cmd-1-2-3-gone");
  CHECK(status == ExternalStatus::kFailure);
  CHECK_THAT(status.message, Catch::Contains(command_job::this_machine().host));
  CHECK_THAT(status.message, Catch::Contains("not recorded"));
}

TEST_CASE("a job directory the leader cannot see is a failure naming the host the job ran on") {
  // A takeover: node-a ran the job under its own --jobs-dir; this leader has another one.
  TempDir old_leader, leader;
  auto first = service_for(old_leader, "sleep 30");
  auto id = first->submit(kSlot);
  REQUIRE(id);
  CHECK(command_job::host_of_job(*id) == command_job::this_machine().host);
  auto next = service_for(leader, "true");
  const ExternalStatus unseen = status_of(*next, *id);
  CHECK(unseen == ExternalStatus::kFailure);
  CHECK_THAT(unseen.message, Catch::Contains("ran on host " + command_job::this_machine().host));
  CHECK_THAT(unseen.message, Catch::Contains("--jobs-dir"));
  const ExternalStatus other = status_of(*next, "cmd-1-2-3-4@node-a.example");
  CHECK_THAT(other.message, Catch::Contains("ran on host node-a.example"));
}

TEST_CASE("a non-zero exit status is a failure that says the status") {
  TempDir db;
  auto service = service_for(db, "exit 3");
  auto id = service->submit(kSlot);
  REQUIRE(id);
  REQUIRE(service->start(kSlot, *id));
  const ExternalStatus status = wait_for_end(*service, *id);
  CHECK(status == ExternalStatus::kFailure);
  CHECK_THAT(status.message, Catch::Contains("status 3"));
}

}  // namespace
}  // namespace celos

namespace celos {

TEST_CASE("A job file that cannot be written or read names the file and the reason (errno)") {
  testing::TempDir dir;
  testing::write_text_file(dir / "plain", "a file, not a directory\n");
  auto written = command_job::write_file_atomically(dir / "plain/pid", "1\n");
  REQUIRE_FALSE(written);
  CHECK(written.error().message.find(dir / "plain/pid.tmp") != std::string::npos);
  CHECK(written.error().message.find("Not a directory") != std::string::npos);
  auto read = command_job::read_file(dir / "missing");
  REQUIRE_FALSE(read);
  CHECK(read.error().message.find("No such file or directory") != std::string::npos);
}

}  // namespace celos
