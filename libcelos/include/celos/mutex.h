// A mutex the compiler can check (after LevelDB's port/thread_annotations.h and Abseil's
// Mutex): libstdc++'s std::mutex carries no thread-safety annotations, so clang's
// -Wthread-safety cannot tell which fields a lock guards. celos::Mutex can.
//
//   class Counter {
//    public:
//     void add() EXCLUDES(mutex_) { MutexLock lock(mutex_); ++count_; }
//    private:
//     void reset_locked() REQUIRES(mutex_) { count_ = 0; }
//     Mutex mutex_;
//     int count_ GUARDED_BY(mutex_) = 0;
//   };
//
// Under clang the fuzz preset builds the library with -Wthread-safety (CELOS_THREAD_SAFETY):
// reading `count_` without the lock is then a compile error. Under GCC the annotations are
// empty and Mutex is a std::mutex. CondVar waits on a Mutex the caller holds.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define CELOS_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define CELOS_THREAD_ANNOTATION(x)
#endif

// On a field: only read or written while holding the given mutex.
#define GUARDED_BY(x) CELOS_THREAD_ANNOTATION(guarded_by(x))
// On a pointer field: what it points to is guarded by the given mutex.
#define PT_GUARDED_BY(x) CELOS_THREAD_ANNOTATION(pt_guarded_by(x))
// On a function: the caller holds (REQUIRES) or must not hold (EXCLUDES) the mutexes.
#define REQUIRES(...) CELOS_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) CELOS_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// On a function: it takes (ACQUIRE) or gives back (RELEASE) the mutexes.
#define ACQUIRE(...) CELOS_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) CELOS_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) CELOS_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// On a function returning a guarded field's mutex, and on code the analysis cannot follow.
#define RETURN_CAPABILITY(x) CELOS_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS CELOS_THREAD_ANNOTATION(no_thread_safety_analysis)
#define CELOS_CAPABILITY(x) CELOS_THREAD_ANNOTATION(capability(x))
#define CELOS_SCOPED_CAPABILITY CELOS_THREAD_ANNOTATION(scoped_lockable)

namespace celos {

class CELOS_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { mutex_.lock(); }
  void unlock() RELEASE() { mutex_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mutex_.try_lock(); }

 private:
  friend class CondVar;
  std::mutex mutex_;
};

// Holds a Mutex for its scope (std::lock_guard with annotations). unlock() gives it up early
// (for a slow call in the middle of a locked loop) and lock() takes it back; the destructor
// releases it only when held.
class CELOS_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mutex_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void unlock() RELEASE() {
    mutex_.unlock();
    held_ = false;
  }
  void lock() ACQUIRE() {
    mutex_.lock();
    held_ = true;
  }

 private:
  Mutex& mutex_;
  bool held_ = true;
};

// A condition variable whose waits take the Mutex the caller holds (as Abseil's CondVar), so
// the analysis knows which lock a wait gives up and takes back. Waits may wake spuriously: wait
// in a loop on the condition (`while (!stopping_) wake_.wait(mutex_);`: a predicate lambda would
// read the guarded fields where the analysis cannot see the lock). Timed waits that a test or
// the simulator must control go through Clock::wait_until (celos/clock.h).
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void wait(Mutex& mutex) REQUIRES(mutex) {
    std::unique_lock lock(mutex.mutex_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // Waits until notified or `deadline`; false when the deadline passed.
  template <typename TimePoint>
  bool wait_until(Mutex& mutex, TimePoint deadline) REQUIRES(mutex) {
    std::unique_lock lock(mutex.mutex_, std::adopt_lock);
    const bool notified = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  void notify_one() { cv_.notify_one(); }
  void notify_all() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace celos
