// Time as an interface (after RocksDB's SystemClock): everything in celos that reads the time
// or waits for it takes a Clock&, so that tests and the simulator can run the real code on a
// time they choose and move by hand.
//
// Two readings, as the operating system has them:
//   * now(): the wall clock, a UTC instant (celos::Time). Slots, schedules, leases as the
//     database judges them, log records and audit records use it. It may jump (NTP, an
//     operator); never measure a duration with it.
//   * monotonic(): a clock that only moves forward, for durations and deadlines (timeouts,
//     back-off, "renewed less than a lease ago"). Its epoch is arbitrary.
// And two waits on the monotonic clock, which a ManualClock ends only when the test advances it
// past the deadline, so that nothing in a test waits for real time:
//   * sleep_until(): a thread with nothing else to wait for (ended early by wake_all()).
//   * wait_until(): a condition variable of the caller's, under the caller's Mutex, that other
//     threads notify (a queue, a stop flag) and that also times out on this clock:
//
//       MutexLock lock(mutex_);
//       const auto deadline = clock_.monotonic() + interval;
//       while (!stopping_ && clock_.wait_until(wake_, mutex_, deadline)) {}
//
// Thread-safety: every Clock is safe to use from several threads at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "celos/mutex.h"
#include "celos/time.h"

namespace celos {

class Clock {
 public:
  using Monotonic = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;
  // The wall clock, UTC, not rounded.
  virtual Time now() const = 0;
  // A clock that never goes backwards; only differences of its values mean anything.
  virtual Monotonic monotonic() const = 0;
  // Blocks until monotonic() >= deadline, or until `stop()` is true when the clock wakes its
  // sleepers (it is checked first, then whenever the clock may have moved; `stop` may be
  // empty). Returns true when the deadline was reached, false when `stop` ended the wait.
  // `stop` is read under no lock of the caller's: make what it reads atomic, or call
  // wake_all() after changing it.
  virtual bool sleep_until(Monotonic deadline, const std::function<bool()>& stop) = 0;
  // Ends the waits whose `stop` has become true (a stopping thread calls this after setting
  // its flag).
  virtual void wake_all() = 0;

  bool sleep_for(std::chrono::milliseconds duration, const std::function<bool()>& stop = {}) {
    return sleep_until(monotonic() + duration, stop);
  }

  // Gives up `mutex` (held by the caller) and waits on `cv` until it is notified or until
  // monotonic() >= deadline; holds `mutex` again on return. Returns false when the deadline
  // has been reached, true otherwise: notified, or woken spuriously (as every condition wait
  // may be), so the caller loops on its condition and the deadline. A notification is not lost
  // when the notifier changes the condition under `mutex`. A ManualClock's wait returns
  // after at most a millisecond of real time (true, as a spurious wake-up, until the deadline
  // is reached) and counts in sleepers() meanwhile.
  virtual bool wait_until(CondVar& cv, Mutex& mutex, Monotonic deadline) REQUIRES(mutex) = 0;
  bool wait_for(CondVar& cv, Mutex& mutex, std::chrono::milliseconds duration) REQUIRES(mutex) {
    return wait_until(cv, mutex, monotonic() + duration);
  }
};

// The process's real clocks (std::chrono::system_clock and steady_clock). Lives forever.
Clock& system_clock();

// A clock that moves only when told to (tests, `celos simulate`). Both readings start where
// the constructor puts them and advance together.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Time start = Time{});

  Time now() const override;
  Monotonic monotonic() const override;
  bool sleep_until(Monotonic deadline, const std::function<bool()>& stop) override;
  void wake_all() override;
  bool wait_until(CondVar& cv, Mutex& mutex, Monotonic deadline) override REQUIRES(mutex);

  // Moves both readings forward by `step` (negative steps are refused: a monotonic clock
  // never goes back) and wakes the sleepers whose deadline has come.
  void advance(std::chrono::milliseconds step);
  // Sets the wall clock alone, as an operator or NTP does (the monotonic clock does not move).
  void set_wall(Time wall);
  // The number of threads inside sleep_until() or wait_until() right now: a test advances once the
  // thread it drives is waiting.
  int sleepers() const;

 private:
  mutable Mutex mutex_;
  CondVar moved_;
  Time wall_ GUARDED_BY(mutex_);
  std::chrono::milliseconds elapsed_ GUARDED_BY(mutex_){0};  // monotonic() - its epoch
  int sleepers_ GUARDED_BY(mutex_) = 0;
  std::uint64_t generation_ GUARDED_BY(mutex_) = 0;  // bumped by every advance and wake_all
};

}  // namespace celos
