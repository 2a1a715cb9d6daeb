// Starting a command job's wrapper as a process of its own, adopted by init, without forking
// celos-server.
//
// A fork copies the forking process's page tables (and the intermediate process that lets the
// job be adopted by init copied them again): at a few hundred MB of server that is most of a
// launch, and a storm of 10,000 announced inputs spent most of its time there (issue 28). So the
// server only posix_spawn()s (no copy) a small /bin/sh in the job's working directory, with the
// job's descriptors: that shell starts the wrapper in a session of its own in the background
// (util-linux's setsid: the job's pid is its process group, which kill() signals) and writes the
// job's pid to a pipe before it exits.
#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

#include "celos/error.h"

namespace celos::command_job {

struct Launch {
  std::string cwd;                // the job's working directory
  std::vector<std::string> args;  // /bin/sh's arguments after "sh": -c SCRIPT $0 $1 ...
  std::vector<std::string> env;   // NAME=value, the job's whole environment
  std::string stdout_path;        // appended to, created if missing
  std::string stderr_path;
};

struct LaunchError {
  std::string message;     // "cannot enter /x: No such file or directory", "exec /bin/sh: ..."
  bool permanent = false;  // the job can never start (a missing directory, no /bin/sh)
};

// The job's pid, or why it did not start.
[[nodiscard]] tl::expected<pid_t, LaunchError> launch(const Launch& job);

}  // namespace celos::command_job
