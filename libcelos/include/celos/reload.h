// What SIGHUP does (SPEC §16): reopen the log files, re-read the tokens file, re-read
// celos-ui's config. Each part registers a hook; serving and the running step go on.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "celos/error.h"
#include "celos/mutex.h"

namespace celos {

class ReloadHooks {
 public:
  // `what` names the hook in the log ("log files", "tokens file").
  void add(std::string what, std::function<Result<void>()> hook);
  // Runs every hook in the order added; a failing (or throwing) hook is logged with its name
  // and the others still run. Returns the number of failures. Thread-safe.
  int run();

 private:
  Mutex mutex_;  // also keeps two reloads from running at once
  std::vector<std::pair<std::string, std::function<Result<void>()>>> hooks_ GUARDED_BY(mutex_);
};

}  // namespace celos
