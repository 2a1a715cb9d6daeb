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
  return [&api, &worker](HttpServerRequest request, HttpResponder respond_raw) {
    HttpResponder respond = [&api, respond_raw](HttpServerResponse response) {
      api.metrics().count_http_request(response.status);
      respond_raw(std::move(response));
    };
    auto shared = std::make_shared<const HttpServerRequest>(std::move(request));
    auto answer = [&api, &worker, shared, respond] {
      if (!api.is_mutation(*shared)) return respond(api.handle(*shared));
      const bool queued = worker.post(
          [&api, shared, respond] { respond(api.handle(*shared)); },
          [respond] { respond(json_error(503, "the server is shutting down")); });
      if (!queued) respond(json_error(503, "the server is shutting down"));
    };
    StartupGate* gate = api.options().startup;
    if (gate == nullptr || gate->is_open() || api.answers_while_loading(*shared)) return answer();
    gate->run_or_wait(answer, [respond] { respond(json_error(503, "workflows are loading")); });
  };
}

StartupGate::StartupGate(std::chrono::milliseconds max_wait)
    : max_wait_(max_wait), timer_([this] { expire_loop(); }) {}

StartupGate::~StartupGate() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  timer_.join();
  for (auto& waiting : waiting_) waiting.on_timeout();
}

void StartupGate::open() {
  std::deque<Waiting> ready;
  {
    std::lock_guard lock(mutex_);
    open_ = true;
    ready.swap(waiting_);
  }
  wake_.notify_all();
  for (auto& waiting : ready) waiting.job();
}

void StartupGate::run_or_wait(std::function<void()> job, std::function<void()> on_timeout) {
  {
    std::lock_guard lock(mutex_);
    if (!open_) {
      waiting_.push_back({std::chrono::steady_clock::now() + max_wait_, std::move(job),
                          std::move(on_timeout)});
      wake_.notify_all();
      return;
    }
  }
  job();
}

void StartupGate::expire_loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_ && !open_) {
    if (waiting_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const auto deadline = waiting_.front().deadline;  // in arrival order: the first is due first
    if (std::chrono::steady_clock::now() < deadline) {
      wake_.wait_until(lock, deadline);
      continue;
    }
    Waiting expired = std::move(waiting_.front());
    waiting_.pop_front();
    lock.unlock();
    expired.on_timeout();
    lock.lock();
  }
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
