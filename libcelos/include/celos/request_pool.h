// What keeps celos-server's HTTP threads free (issue 33): requests that may wait on the state
// database, a file system or another node run on a RequestPool, and a DeadlineTimer answers
// the client when they take too long. The two race through a Claim: whichever comes first
// answers, the other does nothing.
//
//   DeadlineTimer  one thread that runs callbacks at their time
//   RequestPool    N threads with a bounded queue
//   Claim          "started", "finished" or "expired", decided once
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#include "celos/clock.h"
#include "celos/mutex.h"

namespace celos {

class DeadlineTimer {
 public:
  explicit DeadlineTimer(Clock& clock = system_clock());
  // Callbacks not yet due are dropped.
  ~DeadlineTimer();
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;

  // Runs `callback` on the timer's thread at `when` (at once if past). Callbacks must be short.
  // `when` is on the clock's monotonic().
  void at(Clock::Monotonic when, std::function<void()> callback);
  void after(std::chrono::milliseconds delay, std::function<void()> callback) {
    at(clock_.monotonic() + delay, std::move(callback));
  }

 private:
  void loop() EXCLUDES(mutex_);

  Clock& clock_;
  Mutex mutex_;
  CondVar wake_;
  std::multimap<Clock::Monotonic, std::function<void()>> due_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

// Decides once between a job and its deadline: the job calls start() before it begins (false:
// the deadline came first, do nothing), the deadline calls expire() (false: the job began
// first). A read may answer at its deadline although it began (its late answer is dropped); a
// mutation that began is never answered as if it had not.
class Claim {
 public:
  bool start() { return take(kStarted); }
  bool expire() { return take(kExpired); }
  bool started() const { return state_.load() == kStarted; }

 private:
  enum : int { kQueued = 0, kStarted = 1, kExpired = 2 };
  bool take(int to) {
    int expected = kQueued;
    return state_.compare_exchange_strong(expected, to);
  }
  std::atomic<int> state_{kQueued};
};

// `threads` threads running jobs in the order posted; at most `max_queued` wait.
class RequestPool {
 public:
  RequestPool(int threads, std::size_t max_queued);
  // Lets running jobs finish; queued ones run their `on_cancel`.
  ~RequestPool();
  RequestPool(const RequestPool&) = delete;
  RequestPool& operator=(const RequestPool&) = delete;

  // False (nothing queued or called) when the queue is full or the pool stops.
  bool post(std::function<void()> job, std::function<void()> on_cancel = {});
  int threads() const { return static_cast<int>(threads_.size()); }
  // Jobs queued or running now (for tests and /metrics).
  std::size_t busy() const;

 private:
  struct Job {
    std::function<void()> run;
    std::function<void()> cancel;
  };
  void loop() EXCLUDES(mutex_);

  const std::size_t max_queued_;
  mutable Mutex mutex_;
  CondVar wake_;
  std::deque<Job> queue_ GUARDED_BY(mutex_);
  std::size_t running_ GUARDED_BY(mutex_) = 0;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace celos
