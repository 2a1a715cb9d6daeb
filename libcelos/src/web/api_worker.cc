// The threading around the Api: one worker for steps and mutations, the handler that routes
// requests to it, and the periodic stepper of --autoSchedule.
#include <exception>
#include <future>
#include <memory>

#include <spdlog/spdlog.h>

#include "celos/api.h"

namespace celos {

SerialWorker::SerialWorker() : thread_([this] { loop(); }) {}

SerialWorker::~SerialWorker() { stop(); }

bool SerialWorker::post(std::function<void()> job, std::function<void()> on_cancel) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    queue_.push_back(Job{std::move(job), std::move(on_cancel)});
  }
  wake_.notify_one();
  return true;
}

void SerialWorker::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // The thread has ended: what is left was never started.
  std::deque<Job> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(queue_);
  }
  for (auto& job : left) {
    if (job.cancel) job.cancel();
  }
}

bool SerialWorker::stopping() const {
  std::lock_guard lock(mutex_);
  return stopping_;
}

void SerialWorker::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      job.run();
    } catch (const std::exception& e) {
      spdlog::error("worker job failed: {}", e.what());
    } catch (...) {
      spdlog::error("worker job failed with an unknown exception");
    }
  }
}

AsyncHttpHandler make_api_http_handler(const Api& api, SerialWorker& worker) {
  return [&api, &worker](HttpServerRequest request, HttpResponder respond) {
    if (!api.is_mutation(request)) return respond(api.handle(request));
    auto shared = std::make_shared<const HttpServerRequest>(std::move(request));
    const bool queued = worker.post(
        [&api, shared, respond] { respond(api.handle(*shared)); },
        [respond] { respond(json_error(503, "the server is shutting down")); });
    if (!queued) respond(json_error(503, "the server is shutting down"));
  };
}

PeriodicStepper::PeriodicStepper(const Api& api, SerialWorker& worker,
                                 std::chrono::milliseconds interval)
    : api_(api), worker_(worker), interval_(interval), thread_([this] { loop(); }) {}

PeriodicStepper::~PeriodicStepper() { stop(); }

void PeriodicStepper::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int PeriodicStepper::steps() const {
  std::lock_guard lock(mutex_);
  return steps_;
}

void PeriodicStepper::loop() {
  using Clock = std::chrono::steady_clock;
  auto next = Clock::now() + interval_;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_until(lock, next, [this] { return stopping_; })) return;
    }
    // Through the worker so that the step never overlaps a mutation or an HTTP step; we wait
    // for it so that automatic steps never pile up in the queue.
    auto done = std::make_shared<std::promise<bool>>();
    const bool queued = worker_.post(
        [this, done] {
          try {
            api_.step(api_.now());
          } catch (const std::exception& e) {
            spdlog::error("automatic step failed: {}", e.what());
          }
          done->set_value(true);
        },
        [done] { done->set_value(false); });
    if (!queued || !done->get_future().get()) return;
    {
      std::lock_guard lock(mutex_);
      ++steps_;
    }
    next += interval_;
    if (next < Clock::now()) next = Clock::now();
  }
}

}  // namespace celos
