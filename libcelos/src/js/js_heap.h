// A Duktape heap with bounded memory and a bounded evaluation time (libcelos/src/js).
//
// Each workflow file gets its own heap: a fresh global scope, and a runaway file (an endless
// loop, a huge allocation) is stopped by its own budget without touching the others. A heap is
// used by one thread at a time; mutex() serializes the calls of properties functions made at
// submit time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "celos/clock.h"
#include "celos/mutex.h"
#include "duktape.h"

namespace celos::js {

class JsHeap {
 public:
  // A heap that refuses allocations beyond `max_bytes` in total. Null if Duktape could not
  // even create it (the budget is too small).
  static std::shared_ptr<JsHeap> create(std::size_t max_bytes);
  ~JsHeap();
  JsHeap(const JsHeap&) = delete;
  JsHeap& operator=(const JsHeap&) = delete;

  duk_context* context() const { return context_; }

  // Starts an evaluation that may run for `budget`: after it, Duktape throws a RangeError from
  // the running script (again and again, so that a script cannot catch its way out).
  void arm(std::chrono::milliseconds budget);
  void disarm();
  // Since the last arm(): did the budget run out, was an allocation refused?
  bool timed_out() const { return timed_out_; }
  bool refused_allocation() const { return refused_allocation_; }
  std::size_t bytes_in_use() const { return in_use_; }
  std::size_t max_bytes() const { return max_bytes_; }

  // Held around every call into the heap after its load (MutexLock lock(heap->mutex())). It
  // guards the Duktape context as a whole, whose fields below Duktape's callbacks touch where
  // the analysis cannot follow: a deliberate exception to GUARDED_BY.
  Mutex& mutex() RETURN_CAPABILITY(mutex_) { return mutex_; }

  // Keeps `owned` alive as long as the heap, and destroys it after the heap (the API functions
  // of a heap reach their file's state through it).
  void attach(std::shared_ptr<void> owned) { attachment_ = std::move(owned); }

  // Called by the hooks below; public only for them.
  void* allocate(std::size_t size);
  void* reallocate(void* pointer, std::size_t size);
  void release(void* pointer);
  bool deadline_passed();

 private:
  bool over_budget(std::size_t more);

  explicit JsHeap(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  duk_context* context_ = nullptr;
  std::size_t max_bytes_;
  std::size_t in_use_ = 0;
  std::uint64_t allocations_ = 0;
  bool armed_ = false;
  bool timed_out_ = false;
  bool refused_allocation_ = false;
  Clock::Monotonic deadline_{};
  Mutex mutex_;
  std::shared_ptr<void> attachment_;  // destroyed after context_ (see ~JsHeap)
};

}  // namespace celos::js
