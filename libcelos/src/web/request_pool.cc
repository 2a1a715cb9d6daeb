// The threads that keep the HTTP threads free (celos/request_pool.h).
#include "celos/request_pool.h"

#include <exception>

#include <spdlog/spdlog.h>

namespace celos {
namespace {

void run_guarded(const std::function<void()>& job, const char* what) {
  try {
    job();
  } catch (const std::exception& e) {
    spdlog::error("{} failed: {}", what, e.what());
  } catch (...) {
    spdlog::error("{} failed with an unknown exception", what);
  }
}

}  // namespace

DeadlineTimer::DeadlineTimer(Clock& clock) : clock_(clock), thread_([this] { loop(); }) {}

DeadlineTimer::~DeadlineTimer() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void DeadlineTimer::at(Clock::Monotonic when, std::function<void()> callback) {
  {
    MutexLock lock(mutex_);
    due_.emplace(when, std::move(callback));
  }
  wake_.notify_all();
}

void DeadlineTimer::loop() {
  MutexLock lock(mutex_);
  while (!stopping_) {
    if (due_.empty()) {
      wake_.wait(mutex_);
      continue;
    }
    if (clock_.wait_until(wake_, mutex_, due_.begin()->first)) continue;
    auto callback = std::move(due_.begin()->second);
    due_.erase(due_.begin());
    lock.unlock();
    run_guarded(callback, "a request deadline");
    lock.lock();
  }
}

RequestPool::RequestPool(int threads, std::size_t max_queued) : max_queued_(max_queued) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { loop(); });
}

RequestPool::~RequestPool() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
  std::deque<Job> left;
  {
    MutexLock lock(mutex_);
    left.swap(queue_);
  }
  for (auto& job : left) {
    if (job.cancel) run_guarded(job.cancel, "cancelling a request");
  }
}

bool RequestPool::post(std::function<void()> job, std::function<void()> on_cancel) {
  {
    MutexLock lock(mutex_);
    if (stopping_ || queue_.size() >= max_queued_) return false;
    queue_.push_back(Job{std::move(job), std::move(on_cancel)});
  }
  wake_.notify_one();
  return true;
}

std::size_t RequestPool::busy() const {
  MutexLock lock(mutex_);
  return queue_.size() + running_;
}

void RequestPool::loop() {
  for (;;) {
    Job job;
    {
      MutexLock lock(mutex_);
      while (!stopping_ && queue_.empty()) wake_.wait(mutex_);
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    run_guarded(job.run, "a request");
    MutexLock lock(mutex_);
    --running_;
  }
}

}  // namespace celos
