// The background check behind /health/ready (celos/db_watch.h).
#include "celos/db_watch.h"

#include <fmt/format.h>

namespace celos {

DatabaseWatch::DatabaseWatch(StateDatabase& db, std::chrono::milliseconds interval)
    : db_(db), interval_(interval), thread_([this] { loop(); }) {}

DatabaseWatch::~DatabaseWatch() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  // A check that hangs holds the thread; it ends with the database's own timeouts.
  thread_.join();
}

DatabaseWatch::Seen DatabaseWatch::last() const {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  std::lock_guard lock(mutex_);
  const auto now = Clock::now();
  Seen seen{status_, std::nullopt};
  if (ended_) seen.age = duration_cast<milliseconds>(now - *ended_);
  if (running_since_ && now - *running_since_ > interval_) {
    const auto waited = duration_cast<milliseconds>(now - *running_since_).count();
    seen.status = fmt::format("no answer for {:.1f} s", static_cast<double>(waited) / 1000);
  }
  return seen;
}

void DatabaseWatch::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    running_since_ = Clock::now();
    lock.unlock();
    auto checked = db_.check();
    lock.lock();
    status_ = checked ? "ok" : checked.error().message;
    ended_ = Clock::now();
    running_since_.reset();
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

}  // namespace celos
