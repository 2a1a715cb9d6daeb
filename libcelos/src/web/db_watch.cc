// The background check behind /health/ready (celos/db_watch.h).
#include "celos/db_watch.h"

#include <fmt/format.h>

namespace celos {

DatabaseWatch::DatabaseWatch(StateDatabase& db, std::chrono::milliseconds interval, Clock& clock)
    : db_(db), interval_(interval), clock_(clock), thread_([this] { loop(); }) {}

DatabaseWatch::~DatabaseWatch() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  // A check that hangs holds the thread; it ends with the database's own timeouts.
  thread_.join();
}

DatabaseWatch::Seen DatabaseWatch::last() const {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  MutexLock lock(mutex_);
  const auto now = clock_.monotonic();
  Seen seen{status_, std::nullopt};
  if (ended_) seen.age = duration_cast<milliseconds>(now - *ended_);
  if (running_since_ && now - *running_since_ > interval_) {
    const auto waited = duration_cast<milliseconds>(now - *running_since_).count();
    seen.status = fmt::format("no answer for {:.1f} s", static_cast<double>(waited) / 1000);
  }
  return seen;
}

void DatabaseWatch::loop() {
  MutexLock lock(mutex_);
  while (!stopping_) {
    running_since_ = clock_.monotonic();
    lock.unlock();
    auto checked = db_.check();
    lock.lock();
    status_ = checked ? "ok" : checked.error().message;
    ended_ = clock_.monotonic();
    running_since_.reset();
    const auto next = *ended_ + interval_;
    while (!stopping_ && clock_.wait_until(wake_, mutex_, next)) {
    }
  }
}

}  // namespace celos
