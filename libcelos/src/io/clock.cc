#include "celos/clock.h"

#include <stdexcept>

namespace celos {
namespace {

constexpr std::chrono::milliseconds kWaitSlice{1};

class SystemClock final : public Clock {
 public:
  Time now() const override {
    return std::chrono::time_point_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now());
  }
  Monotonic monotonic() const override { return std::chrono::steady_clock::now(); }

  bool sleep_until(Monotonic deadline, const std::function<bool()>& stop) override {
    MutexLock lock(mutex_);
    while (!(stop && stop())) {
      if (std::chrono::steady_clock::now() >= deadline) return true;
      woken_.wait_until(mutex_, deadline);
    }
    return false;
  }

  void wake_all() override {
    { MutexLock lock(mutex_); }  // a sleeper between its check and its wait sees it
    woken_.notify_all();
  }

  bool wait_until(CondVar& cv, Mutex& mutex, Monotonic deadline) override REQUIRES(mutex) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    cv.wait_until(mutex, deadline);
    return std::chrono::steady_clock::now() < deadline;
  }

 private:
  Mutex mutex_;
  CondVar woken_;
};

}  // namespace

Clock& system_clock() {
  static SystemClock* clock = new SystemClock();  // never destroyed: threads may outlive main
  return *clock;
}

ManualClock::ManualClock(Time start) : wall_(start) {}

Time ManualClock::now() const {
  MutexLock lock(mutex_);
  return wall_;
}

Clock::Monotonic ManualClock::monotonic() const {
  MutexLock lock(mutex_);
  return Monotonic{} + elapsed_;
}

bool ManualClock::sleep_until(Monotonic deadline, const std::function<bool()>& stop) {
  MutexLock lock(mutex_);
  ++sleepers_;
  bool reached = false;
  while (true) {
    if (stop && stop()) break;
    if (Monotonic{} + elapsed_ >= deadline) {
      reached = true;
      break;
    }
    const std::uint64_t seen = generation_;
    while (generation_ == seen) moved_.wait(mutex_);
  }
  --sleepers_;
  return reached;
}

// The caller's CondVar is notified by the caller's threads, not by advance(): one slice of a
// millisecond of real time on it, then back to the caller (a spurious wake-up, which it
// handles) sees both without the clock ever taking the caller's mutex (which would order the
// two mutexes both ways). A notification within the slice is never lost: the caller re-checks
// its condition, which the notifier changed under the caller's mutex.
bool ManualClock::wait_until(CondVar& cv, Mutex& mutex, Monotonic deadline) {
  {
    MutexLock lock(mutex_);
    if (Monotonic{} + elapsed_ >= deadline) return false;
    ++sleepers_;
  }
  cv.wait_until(mutex, std::chrono::steady_clock::now() + kWaitSlice);
  MutexLock lock(mutex_);
  --sleepers_;
  return Monotonic{} + elapsed_ < deadline;
}

void ManualClock::wake_all() {
  {
    MutexLock lock(mutex_);
    ++generation_;
  }
  moved_.notify_all();
}

void ManualClock::advance(std::chrono::milliseconds step) {
  if (step.count() < 0) throw std::invalid_argument("ManualClock::advance: a negative step");
  {
    MutexLock lock(mutex_);
    wall_ += step;
    elapsed_ += step;
    ++generation_;
  }
  moved_.notify_all();
}

void ManualClock::set_wall(Time wall) {
  MutexLock lock(mutex_);
  wall_ = wall;
}

int ManualClock::sleepers() const {
  MutexLock lock(mutex_);
  return sleepers_;
}

}  // namespace celos
