// A fixed pool of threads for the step's external calls. The threads are created once: a step
// at the top of the hour hands it thousands of short tasks, and thread creation per task would
// cost more than many of the calls.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "celos/executor.h"

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
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void run_all(std::vector<std::function<void()>> tasks) override {
    if (tasks.empty()) return;
    // One batch at a time: run_all is called by the step thread only, but be safe.
    std::lock_guard batch(batch_mutex_);
    std::unique_lock lock(mutex_);
    pending_ = tasks.size();
    for (auto& task : tasks) queue_.push_back(std::move(task));
    wake_.notify_all();
    done_.wait(lock, [this] { return pending_ == 0; });
  }

  int width() const override { return width_; }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      auto task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      task();
      lock.lock();
      if (--pending_ == 0) done_.notify_all();
    }
  }

  const int width_;
  std::mutex batch_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::deque<std::function<void()>> queue_;
  std::size_t pending_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

std::unique_ptr<Executor> make_thread_pool_executor(int width) {
  if (width < 1 || width > 1024) throw std::invalid_argument("executor width must be 1..1024");
  if (width == 1) return make_inline_executor();
  return std::make_unique<ThreadPoolExecutor>(width);
}

}  // namespace celos
