#include "celos/metrics.h"

#include <algorithm>

#include <fmt/format.h>

#include "web/metrics_text.h"

namespace celos {

void metric_header(std::string& out, std::string_view name, std::string_view type,
                   std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

namespace {

const std::vector<double> kStepBounds{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
const std::vector<double> kCallBounds{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};

constexpr std::array<SlotStatus, kSlotStatusCount> kStatuses{
    SlotStatus::kWaiting, SlotStatus::kReady,       SlotStatus::kRunning, SlotStatus::kSuccess,
    SlotStatus::kFailure, SlotStatus::kWaitTimeout, SlotStatus::kKilled};

template <std::size_t N>
int index_of(const std::array<std::string_view, N>& values, std::string_view value) {
  for (std::size_t i = 0; i < N; ++i) {
    if (values[i] == value) return static_cast<int>(i);
  }
  return -1;
}

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  metric_header(out, name, type, help);
}

// Prometheus prints +Inf, and integers without a fraction.
std::string number(double value) { return fmt::format("{}", value); }

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size())) {}

void Histogram::observe(double value) {
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  if (it != bounds_.end()) {
    buckets_[static_cast<std::size_t>(it - bounds_.begin())].fetch_add(1,
                                                                       std::memory_order_relaxed);
  }
  sum_.fetch_add(value, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

void Histogram::render(std::string& out, std::string_view name, std::string_view labels) const {
  const std::string sep = labels.empty() ? "" : ",";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    fmt::format_to(std::back_inserter(out), "{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep,
                   number(bounds_[i]), cumulative);
  }
  const std::uint64_t count = count_.load(std::memory_order_relaxed);
  // A concurrent observe may have counted but not bucketed yet: +Inf never falls below a bucket.
  fmt::format_to(std::back_inserter(out), "{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep,
                 std::max(count, cumulative));
  const std::string braces = labels.empty() ? "" : fmt::format("{{{}}}", labels);
  fmt::format_to(std::back_inserter(out), "{}_sum{} {}\n{}_count{} {}\n", name, braces,
                 number(sum_.load(std::memory_order_relaxed)), name, braces,
                 std::max(count, cumulative));
}

Metrics::Metrics() : step_duration_(kStepBounds), is_leader_([] { return true; }) {
  for (std::size_t i = 0; i < kMetricServices.size() * kMetricOperations.size(); ++i) {
    call_durations_.push_back(std::make_unique<Histogram>(kCallBounds));
  }
  for (std::size_t i = 0; i < kEventSourceNames.size(); ++i) {
    event_to_submit_.push_back(std::make_unique<Histogram>(kStepBounds));
  }
}

void Metrics::on_slot_changes(const std::vector<SlotChange>& changes) {
  // Changes of a step are counted again by on_step; these adjust between steps (rerun, kill).
  MutexLock lock(slots_mutex_);
  for (const SlotChange& change : changes) {
    if (change.by == "step") continue;
    const auto from =
        static_cast<std::size_t>(change.from ? change.from->status : SlotStatus::kWaiting);
    if (slots_[from] > 0) --slots_[from];
    ++slots_[static_cast<std::size_t>(change.to.status)];
  }
  for (const SlotChange& change : changes) {  // stored once per slot: counted once
    const bool was = change.from && change.from->deadline_state == DeadlineState::kMissed;
    if (!was && change.to.deadline_state == DeadlineState::kMissed) {
      deadlines_missed_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void Metrics::on_step(const StepReport& report) {
  steps_.fetch_add(1, std::memory_order_relaxed);
  step_duration_.observe(std::chrono::duration<double>(report.duration).count());
  set_maintenance(report.maintenance);
  record_limits(report);
  if (report.maintenance == MaintenanceMode::kPause) return;  // looked at nothing
  deadlines_at_risk_.store(report.deadlines_at_risk, std::memory_order_relaxed);
  MutexLock lock(slots_mutex_);
  slots_.fill(0);
  for (const auto& [status, count] : report.slot_counts) {
    slots_[static_cast<std::size_t>(status)] = count;
  }
}

void Metrics::count_http_request(int status) {
  if (status >= 0 && status < kHttpCodes) {
    http_[static_cast<std::size_t>(status)].fetch_add(1, std::memory_order_relaxed);
  }
}

void Metrics::on_external_call(std::string_view service, std::string_view operation, double seconds,
                               bool ok) {
  const int s = index_of(kMetricServices, service), o = index_of(kMetricOperations, operation);
  if (s < 0 || o < 0) return;
  const auto si = static_cast<std::size_t>(s);
  call_durations_[si * kMetricOperations.size() + static_cast<std::size_t>(o)]->observe(seconds);
  if (!ok) call_errors_[si].fetch_add(1, std::memory_order_relaxed);
  if (ok && operation == "submit") submissions_[si].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::count_audit_suppressed(std::uint64_t records) {
  audit_suppressed_.fetch_add(records, std::memory_order_relaxed);
}

void Metrics::count_webhook_refused() { webhooks_refused_.fetch_add(1, std::memory_order_relaxed); }

void Metrics::count_notification_dropped() {
  notifications_dropped_.fetch_add(1, std::memory_order_relaxed);
}

void Metrics::observe_event_to_submit(EventSource source, double seconds) {
  event_to_submit_[static_cast<std::size_t>(source)]->observe(seconds);
}

void Metrics::set_maintenance(MaintenanceMode mode) {
  maintenance_.store(static_cast<int>(mode), std::memory_order_relaxed);
}

void Metrics::set_leader_source(std::function<bool()> is_leader) {
  is_leader_ = std::move(is_leader);
}

void Metrics::set_clock_skew_source(std::function<std::optional<double>()> seconds) {
  clock_skew_ = std::move(seconds);
}

int Metrics::running_slots() const {
  MutexLock lock(slots_mutex_);
  return static_cast<int>(slots_[static_cast<std::size_t>(SlotStatus::kRunning)]);
}

void Metrics::render_slots(std::string& out) const {
  std::array<long long, kSlotStatusCount> totals{};
  {
    MutexLock lock(slots_mutex_);
    totals = slots_;
  }
  header(out, "celos_slots", "gauge", "Slots in the 7-day window by status, as of the last step.");
  for (SlotStatus status : kStatuses) {
    fmt::format_to(std::back_inserter(out), "celos_slots{{status=\"{}\"}} {}\n", to_string(status),
                   totals[static_cast<std::size_t>(status)]);
  }
}

void Metrics::render_external(std::string& out) const {
  header(out, "celos_submissions_total", "counter", "Jobs submitted, by external service.");
  for (std::size_t s = 0; s < kMetricServices.size(); ++s) {
    fmt::format_to(std::back_inserter(out), "celos_submissions_total{{service=\"{}\"}} {}\n",
                   kMetricServices[s], submissions_[s].load(std::memory_order_relaxed));
  }
  header(out, "celos_external_call_errors_total", "counter",
         "Failed calls of external services and file systems.");
  for (std::size_t s = 0; s < kMetricServices.size(); ++s) {
    fmt::format_to(std::back_inserter(out),
                   "celos_external_call_errors_total{{service=\"{}\"}} {}\n", kMetricServices[s],
                   call_errors_[s].load(std::memory_order_relaxed));
  }
  header(out, "celos_external_call_duration_seconds", "histogram",
         "Duration of calls of external services and file systems.");
  for (std::size_t s = 0; s < kMetricServices.size(); ++s) {
    for (std::size_t o = 0; o < kMetricOperations.size(); ++o) {
      call_durations_[s * kMetricOperations.size() + o]->render(
          out, "celos_external_call_duration_seconds",
          fmt::format("service=\"{}\",operation=\"{}\"", kMetricServices[s], kMetricOperations[o]));
    }
  }
}

std::string Metrics::render(const WorkflowConfig* config) const {
  std::string out;
  out.reserve(32 * 1024);
  header(out, "celos_steps_total", "counter", "Scheduler steps run.");
  fmt::format_to(std::back_inserter(out), "celos_steps_total {}\n", steps_.load());
  header(out, "celos_step_duration_seconds", "histogram", "Duration of scheduler steps.");
  step_duration_.render(out, "celos_step_duration_seconds", "");
  header(out, "celos_workflows", "gauge", "Workflows loaded.");
  fmt::format_to(std::back_inserter(out), "celos_workflows {}\n",
                 config ? config->workflows.size() : 0);
  header(out, "celos_workflow_load_errors", "gauge", "Workflow files that failed to load.");
  fmt::format_to(std::back_inserter(out), "celos_workflow_load_errors {}\n",
                 config ? config->errors.size() : 0);
  render_slots(out);
  render_external(out);
  render_limits(out);
  render_backfills(out);
  render_events(out);
  render_node(out);
  render_incidents(out);
  for (const auto& source : sources_) source(out);
  return out;
}

void Metrics::render_events(std::string& out) const {
  header(out, "celos_event_to_submit_seconds", "histogram",
         "From an event (announcement, slot change, job end, file, operator) to the submission "
         "of a slot of a workflow it stepped.");
  for (std::size_t e = 0; e < kEventSourceNames.size(); ++e) {
    event_to_submit_[e]->render(out, "celos_event_to_submit_seconds",
                                fmt::format("event=\"{}\"", kEventSourceNames[e]));
  }
  header(out, "celos_http_requests_total", "counter", "HTTP requests answered, by status code.");
  for (int code = 0; code < kHttpCodes; ++code) {
    const auto n = http_[static_cast<std::size_t>(code)].load(std::memory_order_relaxed);
    if (n > 0)
      fmt::format_to(std::back_inserter(out), "celos_http_requests_total{{code=\"{}\"}} {}\n", code,
                     n);
  }
}

void Metrics::render_node(std::string& out) const {
  header(out, "celos_leader", "gauge", "1 if this node is the leader (schedules), else 0.");
  fmt::format_to(std::back_inserter(out), "celos_leader {}\n", is_leader_() ? 1 : 0);
  if (auto skew = clock_skew_ ? clock_skew_() : std::nullopt) {
    header(out, "celos_clock_skew_seconds", "gauge",
           "The state database's clock minus this node's, as of the last lease renewal.");
    fmt::format_to(std::back_inserter(out), "celos_clock_skew_seconds {:.3f}\n", *skew);
  }
  header(out, "celos_maintenance", "gauge", "1 for the current maintenance mode.");
  const int mode = maintenance_.load(std::memory_order_relaxed);
  for (auto m : {MaintenanceMode::kOff, MaintenanceMode::kDrain, MaintenanceMode::kPause}) {
    fmt::format_to(std::back_inserter(out), "celos_maintenance{{mode=\"{}\"}} {}\n", to_string(m),
                   static_cast<int>(m) == mode ? 1 : 0);
  }
}

void Metrics::render_incidents(std::string& out) const {
  header(out, "celos_notifications_dropped_total", "counter",
         "Notifications that could not be queued or delivered.");
  fmt::format_to(std::back_inserter(out), "celos_notifications_dropped_total {}\n",
                 notifications_dropped_.load(std::memory_order_relaxed));
  header(out, "celos_audit_suppressed_total", "counter",
         "Refused requests not written to the audit trail (per-client rate limit).");
  fmt::format_to(std::back_inserter(out), "celos_audit_suppressed_total {}\n",
                 audit_suppressed_.load(std::memory_order_relaxed));
  header(out, "celos_webhooks_refused_total", "counter",
         "Notifications not sent: the webhook points at loopback or this server.");
  fmt::format_to(std::back_inserter(out), "celos_webhooks_refused_total {}\n",
                 webhooks_refused_.load(std::memory_order_relaxed));
  header(out, "celos_deadline_missed_total", "counter",
         "Slots that missed their deadline (each counted once, when the miss was stored).");
  fmt::format_to(std::back_inserter(out), "celos_deadline_missed_total {}\n",
                 deadlines_missed_.load(std::memory_order_relaxed));
  header(out, "celos_deadlines_at_risk", "gauge",
         "Slots predicted to finish after their deadline, as of the last step.");
  fmt::format_to(std::back_inserter(out), "celos_deadlines_at_risk {}\n",
                 deadlines_at_risk_.load(std::memory_order_relaxed));
}

void Metrics::add_source(std::function<void(std::string& out)> render) {
  sources_.push_back(std::move(render));
}

}  // namespace celos
