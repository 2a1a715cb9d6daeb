// A fixed pool of threads for the step's external calls. The threads are created once: a step
// at the top of the hour hands it thousands of short tasks, and thread creation per task would
// cost more than many of the calls.
#include <deque>
#include <stdexcept>
#include <thread>

#include "celos/executor.h"
#include "celos/mutex.h"

namespace celos {
namespace {

class ThreadPoolExecutor final : public Executor {
 public:
  explicit ThreadPoolExecutor(int width) : width_(width) {
    threads_.reserve(static_cast<std::size_t>(width));
    for (int i = 0; i < width; ++i) threads_.emplace_back([this] { loop(); });
  }

  ~ThreadPoolExecutor() override {
    {
      MutexLock lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void run_all(std::vector<std::function<void()>> tasks) override {
    if (tasks.empty()) return;
    // One batch at a time: run_all is called by the step thread only, but be safe.
    MutexLock batch(batch_mutex_);
    MutexLock lock(mutex_);
    pending_ = tasks.size();
    for (auto& task : tasks) queue_.push_back(std::move(task));
    wake_.notify_all();
    while (pending_ != 0) done_.wait(mutex_);
  }

  int width() const override { return width_; }

 private:
  void loop() {
    MutexLock lock(mutex_);
    for (;;) {
      while (!stopping_ && queue_.empty()) wake_.wait(mutex_);
      if (queue_.empty()) return;  // stopping
      auto task = std::move(queue_.front());
      queue_.pop_front();
      mutex_.unlock();
      task();
      mutex_.lock();
      if (--pending_ == 0) done_.notify_all();
    }
  }

  const int width_;
  Mutex batch_mutex_;  // one batch at a time
  Mutex mutex_;
  CondVar wake_;
  CondVar done_;
  std::deque<std::function<void()>> queue_ GUARDED_BY(mutex_);
  std::size_t pending_ GUARDED_BY(mutex_) = 0;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace

std::unique_ptr<Executor> make_thread_pool_executor(int width) {
  if (width < 1 || width > 1024) throw std::invalid_argument("executor width must be 1..1024");
  if (width == 1) return make_inline_executor();
  return std::make_unique<ThreadPoolExecutor>(width);
}

}  // namespace celos
