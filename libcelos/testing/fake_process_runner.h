// A ProcessRunner that starts nothing: it answers each program with outputs a test queued
// (recorded from real Slurm 22.05 commands, see libcelos/src/io/slurm/testdata) or computes with
// a handler, and records every request so that tests can count processes and read arguments.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "celos/mutex.h"
#include "celos/process_runner.h"

namespace celos::testing {

class FakeProcessRunner : public ProcessRunner {
 public:
  using Handler = std::function<Result<ProcessOutput>(const ProcessRequest&)>;

  Result<ProcessOutput> run(const ProcessRequest& request) override;

  // The next run of `program` (argv[0]'s last path component) answers `output`; queued answers
  // are used in order, before any handler.
  void answer(const std::string& program, ProcessOutput output);
  void answer(const std::string& program, int exit_code, std::string out, std::string err = "");
  // The next run of `program` fails to run (a timeout, a missing program).
  void answer_error(const std::string& program, std::string message);
  // Answers every run of `program` that has no queued answer.
  void on(const std::string& program, Handler handler);

  std::vector<ProcessRequest> calls() const;
  // How many runs of `program` ("" = of any program).
  int count(const std::string& program = "") const;
  void clear_calls();

  // The contents of a recorded file: "<room>/<name>" is libcelos/src/io/<room>/testdata/<name>.
  static std::string testdata(const std::string& relative);

 private:
  mutable Mutex mutex_;
  std::map<std::string, std::vector<Result<ProcessOutput>>> queued_ GUARDED_BY(mutex_);
  std::map<std::string, Handler> handlers_ GUARDED_BY(mutex_);
  std::vector<ProcessRequest> calls_ GUARDED_BY(mutex_);
};

// argv[0]'s last path component: "sbatch" for "/usr/bin/sbatch".
std::string program_name(const ProcessRequest& request);

}  // namespace celos::testing
