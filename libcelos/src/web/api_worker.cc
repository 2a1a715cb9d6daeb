// The threading around the Api: one worker for steps and mutations, the handler that routes
// requests to it, and the periodic stepper of --autoSchedule.
#include <algorithm>
#include <exception>
#include <future>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/api.h"
#include "celos/api_serving.h"

namespace celos {

SerialWorker::SerialWorker() : thread_([this] { loop(); }) {}

SerialWorker::~SerialWorker() { stop(); }

bool SerialWorker::post(std::function<void()> job, std::function<void()> on_cancel) {
  {
    MutexLock lock(mutex_);
    if (stopping_) return false;
    queue_.push_back(Job{std::move(job), std::move(on_cancel)});
  }
  wake_.notify_one();
  return true;
}

void SerialWorker::stop() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // The thread has ended: what is left was never started.
  std::deque<Job> left;
  {
    MutexLock lock(mutex_);
    left.swap(queue_);
  }
  for (auto& job : left) {
    if (job.cancel) job.cancel();
  }
}

bool SerialWorker::stopping() const {
  MutexLock lock(mutex_);
  return stopping_;
}

void SerialWorker::loop() {
  for (;;) {
    Job job;
    {
      MutexLock lock(mutex_);
      while (!stopping_ && queue_.empty()) wake_.wait(mutex_);
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

HttpServerResponse unavailable(std::string_view message, int retry_after_seconds) {
  HttpServerResponse response = json_error(503, message);
  response.headers["Retry-After"] = std::to_string(std::max(1, retry_after_seconds));
  return response;
}

namespace {

using SharedRequest = std::shared_ptr<const HttpServerRequest>;

int seconds_of(std::chrono::milliseconds d) { return static_cast<int>((d.count() + 999) / 1000); }

// Answers at most once (a read's deadline and its late answer race) and counts that answer.
HttpResponder counted_once(const Api& api, HttpResponder raw) {
  return respond_once(std::move(raw), [&api](const HttpServerResponse& response) {
    api.metrics().count_http_request(response.status);
  });
}

void answer_read(const Api& api, const ServingOptions& serving, SharedRequest request,
                 HttpResponder respond) {
  if (serving.reads == nullptr) return respond(api.handle(*request));
  auto claim = std::make_shared<Claim>();
  const bool queued = serving.reads->post(
      [&api, request, respond, claim] {
        if (claim->start()) respond(api.handle(*request));
      },
      [respond] { respond(unavailable("the server is shutting down", 5)); });
  if (!queued) {
    return respond(unavailable(fmt::format("the server is busy: {} requests are waiting for "
                                           "the state database or a file system; try again",
                                           serving.reads->busy()),
                               seconds_of(serving.read_timeout)));
  }
  if (serving.timer == nullptr) return;
  serving.timer->after(serving.read_timeout, [serving, respond, claim] {
    claim->expire();  // a read not begun never runs; one that began answers too late
    respond(unavailable(fmt::format("{} did not answer within {} s; try again", serving.database,
                                    seconds_of(serving.read_timeout)),
                        seconds_of(serving.read_timeout)));
  });
}

// A mutation not begun within serving.mutation_wait is answered 503 (and never runs).
void expire_mutation(const ServingOptions& serving, HttpResponder respond,
                     std::shared_ptr<Claim> claim) {
  if (serving.timer == nullptr) return;
  serving.timer->after(serving.mutation_wait, [serving, respond, claim] {
    if (!claim->expire()) return;  // it began: its own answer comes
    respond(unavailable(fmt::format("not done: the request waited {} s behind a step or "
                                    "another request (is {} slow?); try again",
                                    seconds_of(serving.mutation_wait), serving.database),
                        seconds_of(serving.mutation_wait)));
  });
}

void answer_mutation(const Api& api, SerialWorker& worker, const ServingOptions& serving,
                     SharedRequest request, HttpResponder respond) {
  auto claim = std::make_shared<Claim>();
  const bool queued = worker.post(
      [&api, request, respond, claim] {
        if (claim->start()) return respond(api.handle(*request));
        api.audit_answer(*request, 503);  // answered 503 at its deadline, never run
      },
      [respond] { respond(unavailable("the server is shutting down", 5)); });
  if (!queued) return respond(unavailable("the server is shutting down", 5));
  expire_mutation(serving, respond, std::move(claim));
}

// The grouped mutations (Route::group_handler) waiting for the worker. One worker job is
// queued while any wait; it runs up to kMaxGroup of them together (Api::handle_group), so a
// burst of announcements costs one durable write per group, not one each (issue 28).
class MutationGroups : public std::enable_shared_from_this<MutationGroups> {
 public:
  static constexpr std::size_t kMaxGroup = 1000;

  void add(const Api& api, SerialWorker& worker, SharedRequest request, HttpResponder respond,
           std::shared_ptr<Claim> claim) EXCLUDES(mutex_) {
    {
      MutexLock lock(mutex_);
      waiting_.push_back({std::move(request), std::move(respond), std::move(claim)});
      if (job_queued_) return;
      job_queued_ = true;
    }
    post(api, worker);
  }

 private:
  struct Waiting {
    SharedRequest request;
    HttpResponder respond;
    std::shared_ptr<Claim> claim;
  };

  void post(const Api& api, SerialWorker& worker) EXCLUDES(mutex_) {
    auto self = shared_from_this();  // queued jobs keep it alive
    if (!worker.post([self, &api, &worker] { self->run(api, worker); },
                     [self] { self->cancel(); })) {
      cancel();
    }
  }

  // On the worker: the waiting requests (at most kMaxGroup; a next job takes the rest).
  void run(const Api& api, SerialWorker& worker) EXCLUDES(mutex_) {
    std::vector<Waiting> group;
    bool more = false;
    {
      MutexLock lock(mutex_);
      const std::size_t n = std::min(waiting_.size(), kMaxGroup);
      group.assign(std::make_move_iterator(waiting_.begin()),
                   std::make_move_iterator(waiting_.begin() + static_cast<std::ptrdiff_t>(n)));
      waiting_.erase(waiting_.begin(), waiting_.begin() + static_cast<std::ptrdiff_t>(n));
      more = !waiting_.empty();
      job_queued_ = more;
    }
    if (more) post(api, worker);
    std::vector<const HttpServerRequest*> requests;
    std::vector<const Waiting*> begun;
    for (const Waiting& w : group) {
      if (!w.claim->start()) {
        api.audit_answer(*w.request, 503);  // answered 503 at its deadline, never run
        continue;
      }
      requests.push_back(w.request.get());
      begun.push_back(&w);
    }
    if (requests.empty()) return;
    std::vector<HttpServerResponse> answers = api.handle_group(requests);
    for (std::size_t k = 0; k < begun.size(); ++k) begun[k]->respond(std::move(answers[k]));
  }

  // The worker stopped (or is stopping): every waiting request is answered 503.
  void cancel() EXCLUDES(mutex_) {
    std::vector<Waiting> left;
    {
      MutexLock lock(mutex_);
      left.swap(waiting_);
      job_queued_ = false;
    }
    for (const Waiting& w : left) w.respond(unavailable("the server is shutting down", 5));
  }

  Mutex mutex_;
  std::vector<Waiting> waiting_ GUARDED_BY(mutex_);
  bool job_queued_ GUARDED_BY(mutex_) = false;
};

void answer_grouped(const Api& api, SerialWorker& worker, const ServingOptions& serving,
                    MutationGroups& groups, SharedRequest request, HttpResponder respond) {
  auto claim = std::make_shared<Claim>();
  groups.add(api, serving.grouped ? *serving.grouped : worker, std::move(request), respond, claim);
  expire_mutation(serving, respond, std::move(claim));
}

}  // namespace

AsyncHttpHandler make_api_http_handler(const Api& api, SerialWorker& worker,
                                       ServingOptions serving) {
  auto groups = std::make_shared<MutationGroups>();
  return [&api, &worker, serving, groups](HttpServerRequest request, HttpResponder respond_raw) {
    HttpResponder respond = counted_once(api, std::move(respond_raw));
    auto shared = std::make_shared<const HttpServerRequest>(std::move(request));
    // /health/*, /metrics and /version never wait for anything: answered here, at once.
    const bool instant = api.answers_while_loading(*shared);
    if (instant) return respond(api.handle(*shared));
    auto answer = [&api, &worker, serving, groups, shared, respond] {
      if (!api.is_mutation(*shared)) return answer_read(api, serving, shared, respond);
      if (api.is_grouped(*shared)) {
        return answer_grouped(api, worker, serving, *groups, shared, respond);
      }
      answer_mutation(api, worker, serving, shared, respond);
    };
    StartupGate* gate = api.options().startup;
    if (gate == nullptr || gate->is_open()) return answer();
    gate->run_or_wait(answer, [respond] { respond(json_error(503, "workflows are loading")); });
  };
}

StartupGate::StartupGate(std::chrono::milliseconds max_wait, Clock& clock)
    : max_wait_(max_wait), clock_(clock), timer_([this] { expire_loop(); }) {}

StartupGate::~StartupGate() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  timer_.join();
  std::deque<Waiting> left;
  {
    MutexLock lock(mutex_);
    left.swap(waiting_);
  }
  for (auto& waiting : left) waiting.on_timeout();
}

void StartupGate::open() {
  std::deque<Waiting> ready;
  {
    MutexLock lock(mutex_);
    open_ = true;
    ready.swap(waiting_);
  }
  wake_.notify_all();
  for (auto& waiting : ready) waiting.job();
}

void StartupGate::run_or_wait(std::function<void()> job, std::function<void()> on_timeout) {
  {
    MutexLock lock(mutex_);
    if (!open_) {
      waiting_.push_back({clock_.monotonic() + max_wait_, std::move(job), std::move(on_timeout)});
      wake_.notify_all();
      return;
    }
  }
  job();
}

void StartupGate::expire_loop() {
  MutexLock lock(mutex_);
  while (!stopping_ && !open_) {
    if (waiting_.empty()) {
      wake_.wait(mutex_);
      continue;
    }
    const auto deadline = waiting_.front().deadline;  // in arrival order: the first is due first
    if (clock_.wait_until(wake_, mutex_, deadline)) continue;
    Waiting expired = std::move(waiting_.front());
    waiting_.pop_front();
    lock.unlock();
    expired.on_timeout();
    lock.lock();
  }
}

PeriodicStepper::PeriodicStepper(const Api& api, SerialWorker& worker,
                                 std::chrono::milliseconds interval, Clock& clock)
    : api_(api), worker_(worker), interval_(interval), clock_(clock), thread_([this] { loop(); }) {}

PeriodicStepper::~PeriodicStepper() { stop(); }

void PeriodicStepper::stop() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int PeriodicStepper::steps() const {
  MutexLock lock(mutex_);
  return steps_;
}

void PeriodicStepper::loop() {
  auto next = clock_.monotonic() + interval_;
  for (;;) {
    {
      MutexLock lock(mutex_);
      while (!stopping_ && clock_.wait_until(wake_, mutex_, next)) {
      }
      if (stopping_) return;
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
      MutexLock lock(mutex_);
      ++steps_;
    }
    next += interval_;
    next = std::max(next, clock_.monotonic());
  }
}

}  // namespace celos
