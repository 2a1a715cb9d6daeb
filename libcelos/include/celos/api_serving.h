// How celos-server serves its Api (SPEC §6, §16):
//
//   StartupGate      requests wait until the first load of the workflows has ended
//   SerialWorker     one thread that runs jobs in order (steps and mutations)
//   make_api_http_handler   reads answered at once, mutations queued on the worker
//   PeriodicStepper  --autoSchedule: a step every N seconds through the worker
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "celos/api.h"
#include "celos/clock.h"
#include "celos/http_server.h"
#include "celos/mutex.h"
#include "celos/request_pool.h"

namespace celos {

// Holds requests back until the first load of the workflows has ended (SPEC §16): jobs wait
// (at most `max_wait`, then their timeout runs) and run on the thread that calls open().
class StartupGate {
 public:
  explicit StartupGate(std::chrono::milliseconds max_wait = std::chrono::seconds(60),
                       Clock& clock = system_clock());
  ~StartupGate();
  StartupGate(const StartupGate&) = delete;
  StartupGate& operator=(const StartupGate&) = delete;

  bool is_open() const { return open_.load(); }
  // Runs the waiting jobs; later ones run at once. Idempotent.
  void open();
  // Runs `job` now if open, else when opened or (`on_timeout` instead) after max_wait.
  void run_or_wait(std::function<void()> job, std::function<void()> on_timeout);

 private:
  struct Waiting {
    Clock::Monotonic deadline;
    std::function<void()> job;
    std::function<void()> on_timeout;
  };
  void expire_loop() EXCLUDES(mutex_);

  std::chrono::milliseconds max_wait_;
  Clock& clock_;
  std::atomic<bool> open_{false};  // written under mutex_, read without it by is_open()
  Mutex mutex_;
  CondVar wake_;
  std::deque<Waiting> waiting_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread timer_;
};

// Runs jobs one at a time, in the order posted, on its own thread.
class SerialWorker {
 public:
  SerialWorker();
  ~SerialWorker();
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  // Queues a job. If the worker stops before running it, `on_cancel` runs instead (on the
  // thread that calls stop()). False (and nothing queued or called) once stop() has begun.
  bool post(std::function<void()> job, std::function<void()> on_cancel = {});

  // Lets the running job finish, cancels the queued ones, joins the thread. Idempotent.
  void stop();
  // True once stop() has begun.
  bool stopping() const;

 private:
  struct Job {
    std::function<void()> run;
    std::function<void()> cancel;
  };
  void loop() EXCLUDES(mutex_);

  mutable Mutex mutex_;
  CondVar wake_;
  std::deque<Job> queue_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

// Where the server's handler runs what may wait (issue 33). Without a pool, reads run on the
// connection's thread; without a timer, nothing has a deadline (unit tests).
struct ServingOptions {
  RequestPool* reads = nullptr;
  DeadlineTimer* timer = nullptr;
  // A read that has not answered by then is answered 503 naming `database` (its late answer
  // is dropped); one still queued then never runs.
  std::chrono::milliseconds read_timeout{10000};
  // A mutation still waiting for the worker (behind a step or a mutation) then is answered 503
  // and never runs; one that began is always answered with its result.
  std::chrono::milliseconds mutation_wait{15000};
  // Where the grouped mutations (Route::group_handler: dataset announcements) run, beside the
  // steps and the other mutations; null = on the worker with them (unit tests).
  SerialWorker* grouped = nullptr;
  std::string database = "the state database";
};

// A 503 with Retry-After (seconds): the client may try again, nothing was done.
HttpServerResponse unavailable(std::string_view message, int retry_after_seconds);

// The server's handler: /health/*, /metrics and /version (the routes that answer while
// loading) on the calling (connection) thread, other reads on `serving.reads`, mutations queued
// on `worker` (grouped ones on `serving.grouped`) and answered when they ran (503 if the worker
// stopped first). While the Api's StartupGate is closed, requests other than /health/*,
// /metrics and /version wait for it (503 {"error": "workflows are loading"} after its
// max_wait). Every answer is counted once in the Api's metrics. `api`, the workers and the
// pool and timer must outlive the handler.
AsyncHttpHandler make_api_http_handler(const Api& api, SerialWorker& worker,
                                       ServingOptions serving = {});

// --autoSchedule: a step at the current time every `interval`, through `worker`, so that steps
// never overlap each other or a mutation. The first step comes one interval after start. A step
// that runs longer than the interval is followed by the next one at once (no pile-up).
class PeriodicStepper {
 public:
  PeriodicStepper(const Api& api, SerialWorker& worker, std::chrono::milliseconds interval,
                  Clock& clock = system_clock());
  ~PeriodicStepper();
  PeriodicStepper(const PeriodicStepper&) = delete;
  PeriodicStepper& operator=(const PeriodicStepper&) = delete;

  // Waits for a running step to finish and stops. Idempotent.
  void stop();
  // Steps run so far (for tests and logs).
  int steps() const;

 private:
  void loop() EXCLUDES(mutex_);

  const Api& api_;
  SerialWorker& worker_;
  std::chrono::milliseconds interval_;
  Clock& clock_;
  mutable Mutex mutex_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  int steps_ GUARDED_BY(mutex_) = 0;
  std::thread thread_;
};

}  // namespace celos
