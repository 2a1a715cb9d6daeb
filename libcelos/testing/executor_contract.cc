#include "testing/executor_contract.h"

#include <fstream>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "celos/time.h"

namespace celos::testing {
namespace {

// Far from any real slot, one hour per slot a check uses.
const Time kBase = make_time(2030, 1, 1);

const char* state_name(JobState state) {
  switch (state) {
    case JobState::kRunning:
      return "RUNNING";
    case JobState::kSuccess:
      return "SUCCESS";
    case JobState::kFailure:
      return "FAILURE";
    case JobState::kSubmitted:
      return "SUBMITTED";
  }
  return "?";
}

std::string describe(const Result<ExternalStatus>& status) {
  if (!status) return "error: " + status.error().message;
  return fmt::format("{} \"{}\"", state_name(status->state), status->message);
}

bool is_final(const ExternalStatus& s) {
  return s.state == JobState::kSuccess || s.state == JobState::kFailure;
}

// One contract run: the bench, the workflow prefix, the next free slot.
class Run {
 public:
  Run(const ExecutorBench& bench, std::string prefix) : bench_(bench), prefix_(std::move(prefix)) {}

  // A slot no other check of this process used (Catch2 runs the test case again per SECTION).
  SlotId slot(const char* behaviour) {
    static int next_hour = 0;
    return {prefix_ + "-" + behaviour, kBase + std::chrono::hours(next_hour++)};
  }

  // submit_with + start, both required to succeed; returns the external id.
  std::string submit(ExternalService& service, const SlotId& slot) {
    auto id = service.submit_with(slot, SubmitContext{});
    INFO("submit " << to_string(slot) << ": " << (id ? *id : id.error().message));
    REQUIRE(id);
    REQUIRE_FALSE(id->empty());
    return *id;
  }
  std::string submit_and_start(ExternalService& service, const SlotId& slot) {
    std::string id = submit(service, slot);
    auto started = service.start(slot, id);
    INFO("start " << id << ": " << (started ? "ok" : started.error().message));
    REQUIRE(started);
    return id;
  }

  // Polls status() (with the bench's advance) until `done` holds or the bench's timeout.
  Result<ExternalStatus> wait(ExternalService& service, const SlotId& slot, const std::string& id,
                              const std::function<bool(const ExternalStatus&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + bench_.timeout;
    for (;;) {
      if (bench_.advance) bench_.advance();
      auto status = service.status(slot, id);
      if ((status && done(*status)) || std::chrono::steady_clock::now() > deadline) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  Result<ExternalStatus> wait_final(ExternalService& service, const SlotId& slot,
                                    const std::string& id) {
    return wait(service, slot, id, is_final);
  }
  Result<ExternalStatus> wait_running(ExternalService& service, const SlotId& slot,
                                      const std::string& id) {
    return wait(service, slot, id,
                [](const ExternalStatus& s) { return s.state != JobState::kSubmitted; });
  }

  const ExecutorBench& bench() const { return bench_; }

 private:
  const ExecutorBench& bench_;
  std::string prefix_;
};

void runs_once_after_start(Run& run) {
  auto service = run.bench().make_service();
  const SlotId slot = run.slot("ok");
  const std::string id = run.submit(*service, slot);
  auto held = service->status(slot, id);
  INFO("before start: " << describe(held));
  REQUIRE(held);
  CHECK_FALSE(is_final(*held));
  CHECK(run.bench().starts(slot) == 0);
  REQUIRE(service->start(slot, id));
  auto done = run.wait_final(*service, slot, id);
  INFO("after start: " << describe(done));
  REQUIRE(done);
  CHECK(done->state == JobState::kSuccess);
  CHECK(run.bench().starts(slot) == 1);
}

void fails(Run& run) {
  auto service = run.bench().make_service();
  const SlotId slot = run.slot("fail");
  const std::string id = run.submit_and_start(*service, slot);
  auto done = run.wait_final(*service, slot, id);
  INFO(describe(done));
  REQUIRE(done);
  CHECK(done->state == JobState::kFailure);
}

// status_many answers each job; then kill ends the running one, twice without error.
void bulk_status_and_kill(Run& run) {
  auto service = run.bench().make_service();
  std::vector<ExternalService::Job> jobs;
  for (const char* behaviour : {"ok", "fail", "long"}) {
    const SlotId slot = run.slot(behaviour);
    jobs.push_back({slot, run.submit_and_start(*service, slot)});
  }
  const ExternalService::Job& ok = jobs[0];
  const ExternalService::Job& failing = jobs[1];
  const ExternalService::Job& running = jobs[2];
  run.wait_final(*service, ok.slot, ok.external_id);
  run.wait_final(*service, failing.slot, failing.external_id);
  run.wait_running(*service, running.slot, running.external_id);
  auto answers = service->status_many(jobs);
  REQUIRE(answers.size() == 3);
  auto state_of = [&](const ExternalService::Job& job) -> Result<ExternalStatus> {
    auto found = answers.find(job.external_id);
    if (found == answers.end()) return fail("no answer for " + job.external_id);
    return found->second;
  };
  INFO("ok: " << describe(state_of(ok)) << ", fail: " << describe(state_of(failing))
              << ", long: " << describe(state_of(running)));
  CHECK(state_of(ok).value_or(JobState::kRunning).state == JobState::kSuccess);
  CHECK(state_of(failing).value_or(JobState::kRunning).state == JobState::kFailure);
  CHECK(state_of(running).value_or(JobState::kFailure).state == JobState::kRunning);

  CHECK(service->kill(running.slot, running.external_id));
  auto killed = run.wait_final(*service, running.slot, running.external_id);
  INFO("killed: " << describe(killed));
  REQUIRE(killed);
  CHECK(killed->state == JobState::kFailure);
  CHECK(service->kill(running.slot, running.external_id));
}

void lost_job_fails(Run& run) {
  auto service = run.bench().make_service();
  const SlotId slot = run.slot("long");
  const std::string id = run.submit_and_start(*service, slot);
  run.wait_running(*service, slot, id);
  run.bench().lose_job(slot, id);
  auto lost = run.wait_final(*service, slot, id);
  INFO("lost: " << describe(lost));
  REQUIRE(lost);
  CHECK(lost->state == JobState::kFailure);
  CHECK_FALSE(lost->message.empty());
  (void)service->kill(slot, id);  // cleaning up; what a kill of a lost job answers is open
}

void refused_submit(Run& run) {
  auto service = run.bench().make_refusing_service();
  auto id = service->submit_with(run.slot("ok"), SubmitContext{});
  INFO("refused submit: " << (id ? "id " + *id : id.error().message));
  REQUIRE_FALSE(id);
  CHECK_FALSE(id.error().message.empty());
}

void restart_keeps_jobs(Run& run) {
  const SlotId slot = run.slot("long");
  const std::string id = run.submit_and_start(*run.bench().make_service(), slot);
  auto restarted = run.bench().make_service();
  auto running = run.wait_running(*restarted, slot, id);
  INFO("after restart: " << describe(running));
  REQUIRE(running);
  CHECK(running->state == JobState::kRunning);
  CHECK(restarted->kill(slot, id));
  auto killed = run.wait_final(*restarted, slot, id);
  INFO("killed after restart: " << describe(killed));
  REQUIRE(killed);
  CHECK(killed->state == JobState::kFailure);
}

// The step submits, records RUNNING, then starts. A crash before the record leaves a job
// nobody knows of; the slot is submitted again by the next server. A crash after the record
// but before start() returned makes the step start the recorded job again.
void crash_never_runs_twice(Run& run) {
  const SlotId slot = run.slot("ok");
  const std::string first = run.submit(*run.bench().make_service(), slot);
  auto service = run.bench().make_service();
  const std::string second = run.submit_and_start(*service, slot);
  if (run.bench().start_is_idempotent) {
    CHECK(service->start(slot, second));  // a start repeated after a crash
  } else {
    (void)service->start(slot, second);  // refused (Oozie): what counts is that nothing reruns
  }
  auto done = run.wait_final(*service, slot, second);
  INFO("resubmitted: " << describe(done) << " (first id " << first << ", second " << second << ")");
  REQUIRE(done);
  CHECK(done->state == JobState::kSuccess);
  CHECK(run.bench().starts(slot) == 1);
  if (first != second) {
    auto never = service->status(slot, first);
    INFO("the unrecorded job: " << describe(never));
    CHECK((!never || never->state != JobState::kSuccess));
    CHECK(service->kill(slot, first));  // no job left behind
  }
}

}  // namespace

std::string contract_job_script(const std::string& ledger_dir) {
  return fmt::format(
      "#!/bin/sh\n"
      "echo started >> '{}/'\"$CELOS_WORKFLOW_ID@$CELOS_SLOT_TIME\"\n"
      "case \"$CELOS_WORKFLOW_ID\" in\n"
      "  *-fail) exit 3 ;;\n"
      "  *-long) exec sleep 600 ;;\n"
      "esac\n"
      "exit 0\n",
      ledger_dir);
}

int ledger_starts(const std::string& ledger_dir, const SlotId& slot) {
  std::ifstream in(ledger_dir + "/" + slot.workflow + "@" + format_time(slot.time));
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

void check_executor_contract(const ExecutorBench& bench, const std::string& prefix) {
  Run run(bench, prefix);
  SECTION("a job runs once, after start, to SUCCESS") { runs_once_after_start(run); }
  SECTION("a failing job ends FAILURE") { fails(run); }
  SECTION("status_many answers every job; kill ends a running one, twice is fine") {
    bulk_status_and_kill(run);
  }
  SECTION("a job the engine lost ends FAILURE with a message") { lost_job_fails(run); }
  SECTION("a refused submit is an error with a message") { refused_submit(run); }
  SECTION("a restarted celos answers for and kills a job in flight") { restart_keeps_jobs(run); }
  SECTION("a crash between submit and record, and a repeated start, never run a job twice") {
    crash_never_runs_twice(run);
  }
}

}  // namespace celos::testing
