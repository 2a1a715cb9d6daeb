// /health/ready answered from the last state a background check saw (issue 33): the HTTP
// thread that answers it never waits for the state database.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "celos/clock.h"
#include "celos/mutex.h"
#include "celos/state_db.h"

namespace celos {

// Runs StateDatabase::check() on its own thread every `interval` (the next one starts when the
// previous one ended).
class DatabaseWatch {
 public:
  struct Seen {
    std::string status;  // "ok", why not, or "no answer for N s" while a check hangs
    std::optional<std::chrono::milliseconds> age;  // since the last check ended; none yet
  };

  DatabaseWatch(StateDatabase& db, std::chrono::milliseconds interval,
                Clock& clock = system_clock());
  ~DatabaseWatch();
  DatabaseWatch(const DatabaseWatch&) = delete;
  DatabaseWatch& operator=(const DatabaseWatch&) = delete;

  // The last check's answer. "ok" turns into "no answer for N s" once a check has been
  // running longer than `interval` (a hanging database is not ok).
  Seen last() const;

 private:
  void loop() EXCLUDES(mutex_);

  StateDatabase& db_;
  const std::chrono::milliseconds interval_;
  Clock& clock_;
  mutable Mutex mutex_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::string status_ GUARDED_BY(mutex_) = "not checked yet";
  std::optional<Clock::Monotonic> ended_ GUARDED_BY(mutex_);
  std::optional<Clock::Monotonic> running_since_ GUARDED_BY(mutex_);
  std::thread thread_;
};

}  // namespace celos
