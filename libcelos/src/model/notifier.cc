// Why a queue of its own: a step must never wait for a webhook that hangs (SPEC §13), and a
// receiver that is down for a few minutes must still hear of the failure afterwards.
#include "celos/notifier.h"

#include <algorithm>
#include <random>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace celos {
namespace {

namespace json = boost::json;

std::string random_prefix() {
  std::random_device random;
  return fmt::format("{:08x}{:08x}", random(), random());
}

constexpr std::chrono::milliseconds kShortestWait{1};

bool listed(const std::vector<SlotStatus>& on, SlotStatus s) {
  return std::find(on.begin(), on.end(), s) != on.end();
}

// A change of a slot into AT_RISK or MISSED (celos/deadline.h), stored with the change: once.
bool deadline_alert(const SlotChange& change) {
  const auto to = change.to.deadline_state;
  if (to != DeadlineState::kAtRisk && to != DeadlineState::kMissed) return false;
  return !change.from || change.from->deadline_state != to;
}

}  // namespace

NotificationQueue::NotificationQueue(NotifierOptions options)
    : options_(std::move(options)), id_prefix_(random_prefix()) {}

std::string NotificationQueue::deadline_payload(const SlotChange& change) {
  const SlotState& s = change.to;
  json::object o{{"id", fmt::format("{}-{}", id_prefix_, ++counter_)},
                 {"event", "deadline"},
                 {"workflow", s.id.workflow},
                 {"time", format_time(s.id.time)},
                 {"deadline", s.deadline ? json::value(format_time(*s.deadline)) : json::value()},
                 {"state", to_string(*s.deadline_state)},
                 {"reason", change.deadline_reason},
                 {"status", to_string(s.status)},
                 {"node", options_.node}};
  return json::serialize(o);
}

std::string NotificationQueue::payload(const SlotChange& change, const Workflow* workflow) {
  const SlotState& s = change.to;
  json::object o{{"id", fmt::format("{}-{}", id_prefix_, ++counter_)},
                 {"workflow", s.id.workflow},
                 {"time", format_time(s.id.time)},
                 {"status", to_string(s.status)},
                 {"externalID", s.external_id ? json::value(*s.external_id) : json::value()},
                 {"url", workflow && workflow->url ? json::value(*workflow->url) : json::value()},
                 {"node", options_.node}};
  return json::serialize(o);
}

std::vector<std::string> NotificationQueue::webhooks_for(SlotStatus status,
                                                         const Workflow* workflow) const {
  std::vector<std::string> webhooks;
  if (status == SlotStatus::kFailure || status == SlotStatus::kWaitTimeout) {
    webhooks = options_.default_webhooks;
  }
  if (workflow) {
    for (const Workflow::Notify& rule : workflow->notify) {
      if (listed(rule.on, status)) webhooks.push_back(rule.webhook);
    }
  }
  std::sort(webhooks.begin(), webhooks.end());
  webhooks.erase(std::unique(webhooks.begin(), webhooks.end()), webhooks.end());
  return webhooks;
}

void NotificationQueue::add(const SlotChange& change, const WorkflowConfig& config) {
  const Workflow* workflow = config.find(change.to.id.workflow);
  if (deadline_alert(change)) {
    // Deadline alerts go where FAILURE notifications go.
    for (const std::string& url : webhooks_for(SlotStatus::kFailure, workflow)) {
      std::string body;
      {
        MutexLock lock(mutex_);
        body = deadline_payload(change);
      }
      push(Notification{url, std::move(body), change.at, change.at, 0});
    }
  }
  if (change.from && change.from->status == change.to.status) return;  // not a change of status
  for (const std::string& url : webhooks_for(change.to.status, workflow)) {
    std::string body;
    {
      MutexLock lock(mutex_);
      body = payload(change, workflow);
    }
    push(Notification{url, std::move(body), change.at, change.at, 0});
  }
}

void NotificationQueue::push(Notification n) {
  MutexLock lock(mutex_);
  if (queue_.size() >= options_.capacity && !queue_.empty()) {
    spdlog::warn("notification queue full ({}): dropping the oldest, to {}: {}", options_.capacity,
                 queue_.front().webhook, queue_.front().body);
    queue_.pop_front();
    ++dropped_;
    if (options_.on_drop) options_.on_drop();
  }
  queue_.push_back(std::move(n));
}

std::optional<Time> NotificationQueue::send_due(Time now) {
  for (;;) {
    Notification n;
    {
      MutexLock lock(mutex_);
      auto due = std::min_element(queue_.begin(), queue_.end(),
                                  [](const auto& a, const auto& b) { return a.due < b.due; });
      if (due == queue_.end()) return std::nullopt;
      if (due->due > now) return due->due;
      n = std::move(*due);
      queue_.erase(due);
    }
    if (refused_now(n)) continue;
    HttpRequest request;
    request.method = "POST";
    request.url = n.webhook;
    request.headers = {{"Content-Type", "application/json"}};
    request.body = n.body;
    auto answer = options_.http->send(request);
    ++n.attempts;
    if (answer && answer->status >= 200 && answer->status < 300) {
      MutexLock lock(mutex_);
      ++delivered_;
      continue;
    }
    const std::string why =
        answer ? fmt::format("HTTP {}", answer->status) : answer.error().message;
    auto delay = options_.first_retry * (1LL << std::min(n.attempts - 1, 20));
    delay = std::min<std::chrono::milliseconds>(delay, options_.max_retry);
    if (now + delay - n.created > options_.give_up_after) {
      spdlog::error("notification undeliverable after {} attempts to {}: {} (last: {})", n.attempts,
                    n.webhook, n.body, why);
      MutexLock lock(mutex_);
      ++undeliverable_;
      continue;
    }
    spdlog::warn("notification to {} failed ({}), retry {} in {} s", n.webhook, why, n.attempts,
                 delay.count() / 1000.0);
    n.due = now + delay;
    MutexLock lock(mutex_);
    queue_.push_back(std::move(n));
  }
}

bool NotificationQueue::refused_now(const Notification& n) {
  if (!options_.refuse) return false;
  const auto why = options_.refuse(n.webhook);
  if (!why) return false;
  spdlog::error(
      "notification to {} refused: {} (a webhook may not call loopback or this "
      "server; --allow-loopback-webhooks allows it): {}",
      n.webhook, *why, n.body);
  if (options_.on_refused) options_.on_refused();
  MutexLock lock(mutex_);
  ++refused_;
  return true;
}

std::uint64_t NotificationQueue::refused() const {
  MutexLock lock(mutex_);
  return refused_;
}

std::size_t NotificationQueue::size() const {
  MutexLock lock(mutex_);
  return queue_.size();
}
std::uint64_t NotificationQueue::dropped() const {
  MutexLock lock(mutex_);
  return dropped_;
}
std::uint64_t NotificationQueue::delivered() const {
  MutexLock lock(mutex_);
  return delivered_;
}
std::uint64_t NotificationQueue::undeliverable() const {
  MutexLock lock(mutex_);
  return undeliverable_;
}

Notifier::Notifier(std::function<WorkflowConfigPtr()> config, NotifierOptions options)
    : config_(std::move(config)),
      clock_(options.clock ? *options.clock : system_clock()),
      queue_(std::move(options)),
      thread_([this] { loop(); }) {}

Notifier::~Notifier() { stop(); }

Time Notifier::now() const { return clock_.now(); }

void Notifier::on_slot_changes(const std::vector<SlotChange>& changes) {
  const WorkflowConfigPtr config = config_();
  const std::size_t before = queue_.size();
  for (SlotChange change : changes) {
    // The retry schedule counts from when the change was queued: `at` may be a step's
    // explicit time, far from the clock's.
    change.at = now();
    queue_.add(change, *config);
  }
  if (queue_.size() == before) return;
  MutexLock lock(mutex_);
  woken_ = true;
  wake_.notify_one();
}

void Notifier::stop() {
  {
    MutexLock lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  if (auto left = queue_.size(); left > 0) {
    spdlog::warn("stopping with {} notifications not delivered", left);
  }
}

void Notifier::loop() {
  for (;;) {
    const auto next = queue_.send_due(now());
    MutexLock lock(mutex_);
    if (stopping_) return;
    if (woken_) {
      woken_ = false;
      continue;
    }
    if (next) {
      const auto due_in = std::max<std::chrono::milliseconds>(*next - now(), kShortestWait);
      clock_.wait_for(wake_, mutex_, due_in);
    } else {
      while (!stopping_ && !woken_) wake_.wait(mutex_);
    }
  }
}

}  // namespace celos
