// Running a program and waiting for it: the seam between celos and command-line tools such as
// Slurm's sbatch, squeue and scontrol (SPEC §12).
//
// A program is run from an argument vector, never through a shell: nothing a workflow file says
// can become a second command or an extra argument. Its standard input is the given text, its
// standard output and standard error are captured, and it is bounded by a timeout (after which
// it is killed: SIGTERM, then SIGKILL).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "celos/error.h"

namespace celos {

struct ProcessRequest {
  // argv[0] is the program: a path, or a name looked up in PATH.
  std::vector<std::string> argv;
  // Set in (or added to) the server's environment for this process only.
  std::map<std::string, std::string> env;
  // Written to the program's standard input, which is then closed.
  std::string input;
  std::chrono::milliseconds timeout{30000};
};

struct ProcessOutput {
  int exit_code = 0;  // 128 + signal number when a signal ended it
  std::string out;
  std::string err;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Runs the program to its end. A program that cannot be started or that does not end within
  // the timeout is an Error (ErrorCode::kFailed); a non-zero exit status is not: the caller
  // reads exit_code.
  [[nodiscard]] virtual Result<ProcessOutput> run(const ProcessRequest& request) = 0;
};

using ProcessRunnerPtr = std::shared_ptr<ProcessRunner>;

// The real runner (posix_spawn). Thread-safe. Captured output is limited to `max_output_bytes`
// per stream (the rest is read and dropped).
ProcessRunnerPtr make_process_runner(std::size_t max_output_bytes = 16 * 1024 * 1024);

// The argument vector as one line for messages: `sbatch --parsable 'a b'`.
std::string describe_command(const std::vector<std::string>& argv);

}  // namespace celos
