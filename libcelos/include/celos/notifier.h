// Notifications (SPEC §13, §16): a JSON POST to a webhook on every committed change of a slot
// into a listed status, by a step or the API.
//
//   {"id": "<unique>", "workflow", "time", "status", "externalID", "url" (or null), "node"}
//
// Rules: a workflow's `notify: [{on, webhook}]`, plus the server's --notify-webhook URLs for
// FAILURE and WAIT_TIMEOUT of every workflow. Notifications wait in a bounded in-memory queue
// (lost on a crash; a full queue drops its oldest entry, logged and counted) and are sent by
// their own thread, so a step never waits for a receiver. A POST has its own timeout (the
// HttpClient's; celos-server uses 10 s); a failure (no answer, or a status other than 2xx) is
// retried with exponential back-off until `give_up_after` has passed since the change, then
// logged as undeliverable. Receivers drop duplicates by `id` (a retry after a lost answer).
//
// Deadlines (celos/deadline.h): a change that stores a slot's AT_RISK or MISSED goes to the
// webhooks a FAILURE of the slot goes to, as {"id", "event": "deadline", "workflow", "time",
// "deadline", "state", "reason", "status", "node"}.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "celos/clock.h"
#include "celos/http_client.h"
#include "celos/mutex.h"
#include "celos/scheduler.h"

namespace celos {

struct NotifierOptions {
  std::shared_ptr<HttpClient> http;
  std::vector<std::string> default_webhooks;  // --notify-webhook: FAILURE, WAIT_TIMEOUT
  std::string node;                           // "node" of the payload (this server)
  std::size_t capacity = 10000;               // queued notifications at most
  std::chrono::milliseconds first_retry{std::chrono::seconds(5)};
  std::chrono::milliseconds max_retry{std::chrono::minutes(2)};
  std::chrono::milliseconds give_up_after{std::chrono::minutes(15)};
  Clock* clock = nullptr;  // the retry schedule and the waits; none: system_clock()
  // Called (under the queue's lock: keep it quick) for every notification dropped because the
  // queue was full: celos_notifications_dropped_total.
  std::function<void()> on_drop = {};
  // The reason a webhook must not be called (celos/webhook_guard.h), checked before each send;
  // empty = every webhook may be called. A refused notification is logged, not retried, and
  // reported to `on_refused` (celos_webhooks_refused_total).
  std::function<std::optional<std::string>(const std::string& url)> refuse = {};
  std::function<void()> on_refused = {};
};

struct Notification {
  std::string webhook;
  std::string body;  // the JSON payload
  Time created{};
  Time due{};  // the next attempt
  int attempts = 0;
};

// The queue and its delivery rules, without a thread (driven by Notifier, or by tests with
// explicit times). Thread-safe.
class NotificationQueue {
 public:
  explicit NotificationQueue(NotifierOptions options);

  // Queues one notification for each rule the change matches. `config` supplies the workflow's
  // rules and url.
  void add(const SlotChange& change, const WorkflowConfig& config);
  // Sends every notification due at `now`, one after another; returns when the next one is due
  // (nothing when the queue is empty).
  std::optional<Time> send_due(Time now);

  std::size_t size() const;
  std::uint64_t dropped() const;  // celos_notifications_dropped_total
  std::uint64_t delivered() const;
  std::uint64_t undeliverable() const;
  std::uint64_t refused() const;

 private:
  void push(Notification n) EXCLUDES(mutex_);
  bool refused_now(const Notification& n) EXCLUDES(mutex_);  // logged and counted when refused
  std::string payload(const SlotChange& change, const Workflow* workflow) REQUIRES(mutex_);
  // {"id", "event": "deadline", "workflow", "time", "deadline", "state", "reason", "status",
  // "node"}: a slot's change into AT_RISK or MISSED (celos/deadline.h).
  std::string deadline_payload(const SlotChange& change) REQUIRES(mutex_);
  // The webhooks of a change into `status`: the workflow's rules, and the server's for FAILURE
  // and WAIT_TIMEOUT. Sorted, without duplicates.
  std::vector<std::string> webhooks_for(SlotStatus status, const Workflow* workflow) const;

  NotifierOptions options_;
  mutable Mutex mutex_;
  std::deque<Notification> queue_ GUARDED_BY(mutex_);
  std::uint64_t dropped_ GUARDED_BY(mutex_) = 0, delivered_ GUARDED_BY(mutex_) = 0,
                         undeliverable_ GUARDED_BY(mutex_) = 0, refused_ GUARDED_BY(mutex_) = 0,
                         counter_ GUARDED_BY(mutex_) = 0;
  std::string id_prefix_;
};

// The listener celos-server adds to its Scheduler: queues on commit, delivers on its own thread.
class Notifier final : public SchedulerListener {
 public:
  // `config` returns the current workflows (Scheduler::config); it must stay callable.
  Notifier(std::function<WorkflowConfigPtr()> config, NotifierOptions options);
  ~Notifier() override;
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  void on_slot_changes(const std::vector<SlotChange>& changes) override;
  // Stops the thread (queued notifications are dropped with a log line). Idempotent.
  void stop();
  const NotificationQueue& queue() const { return queue_; }

 private:
  void loop();
  Time now() const;

  std::function<WorkflowConfigPtr()> config_;
  Clock& clock_;
  NotificationQueue queue_;
  Mutex mutex_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  bool woken_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace celos
