// SIGHUP hooks (celos/reload.h).
#include "celos/reload.h"

#include <exception>

#include <spdlog/spdlog.h>

namespace celos {

void ReloadHooks::add(std::string what, std::function<Result<void>()> hook) {
  MutexLock lock(mutex_);
  hooks_.emplace_back(std::move(what), std::move(hook));
}

int ReloadHooks::run() {
  MutexLock lock(mutex_);
  int failures = 0;
  for (const auto& [what, hook] : hooks_) {
    try {
      if (auto done = hook(); !done) {
        ++failures;
        spdlog::error("reload of the {} failed: {}", what, done.error().message);
      } else {
        spdlog::info("reloaded the {}", what);
      }
    } catch (const std::exception& e) {
      ++failures;
      spdlog::error("reload of the {} failed: {}", what, e.what());
    }
  }
  return failures;
}

}  // namespace celos
