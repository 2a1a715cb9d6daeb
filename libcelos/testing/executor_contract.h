// The executor contract: what every ExternalService must do for the step to keep SPEC §10/§16's
// promises, checked the same way against each executor's real or fake engine (command jobs,
// Slurm, Oozie, Kubernetes). An executor's test provides an ExecutorBench and calls
// check_executor_contract() from a TEST_CASE.
//
// The checks (each on slots of its own):
//   - a submitted job does not run before start(); after start() it runs once to SUCCESS;
//   - a job that fails ends FAILURE;
//   - status_many answers for every job it is given (running, succeeded, failed);
//   - kill ends a running job as FAILURE, and killing it again is not an error;
//   - a job the engine lost (deleted behind celos's back) ends FAILURE with a message;
//   - a submit the engine refuses is an Error with a message;
//   - a new service object (a restarted celos) answers for and kills a job in flight;
//   - a crash between submit and the RUNNING record (the id is never recorded, the slot is
//     submitted again) and a start() called twice never run the job twice.
//     (start() twice: only where ExecutorBench::start_is_idempotent.)
//
// Jobs are told apart by their workflow's id: `<prefix>-ok` exits 0, `<prefix>-fail` exits 3,
// `<prefix>-long` runs until killed. Executors that run commands get contract_job_script() as
// their command; engines that run nothing (the fake Oozie) end jobs in ExecutorBench::advance.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "celos/external_service.h"
#include "celos/slot.h"

namespace celos::testing {

struct ExecutorBench {
  // The service under test; each call a new object for the same engine and options, as a
  // restarted celos builds it (jobs of an earlier object must be visible to a later one).
  std::function<ExternalServicePtr()> make_service;
  // A service whose submits the engine refuses (a partition or namespace that does not exist,
  // a jobs directory that cannot be written).
  std::function<ExternalServicePtr()> make_refusing_service;
  // Deletes a running job at the engine, behind celos's back.
  std::function<void(const SlotId& slot, const std::string& external_id)> lose_job;
  // How many times the job of `slot` started running (commands append a line to their ledger;
  // an engine that runs nothing counts its start requests).
  std::function<int(const SlotId& slot)> starts;
  // Called before each status poll: an engine that runs nothing ends its started jobs here as
  // their workflow ids say. Optional.
  std::function<void()> advance = {};
  // start() of a job that already started is not an error and starts nothing (commands,
  // Slurm, Kubernetes). Oozie refuses to start a job twice (an error, and still nothing runs
  // twice); the step only starts jobs whose status is kSubmitted, so both are safe.
  bool start_is_idempotent = true;
  // How long a job may take to reach the state a check waits for.
  std::chrono::seconds timeout{60};
};

// The shell script of a contract job: appends one line to `<ledger_dir>/<workflow>@<slot time>`
// (from CELOS_WORKFLOW_ID and CELOS_SLOT_TIME), then exits as its workflow's id says.
std::string contract_job_script(const std::string& ledger_dir);
// The number of lines of a slot's ledger file (0 when there is none).
int ledger_starts(const std::string& ledger_dir, const SlotId& slot);

// Runs every check above (Catch2 assertions). `prefix` names the workflows (one per executor
// run, so that two runs on one engine do not mix).
void check_executor_contract(const ExecutorBench& bench, const std::string& prefix);

}  // namespace celos::testing
