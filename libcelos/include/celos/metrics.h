// celos-server's Prometheus metrics (SPEC §13, §16), rendered in the text format 0.0.4 by
// GET /metrics. Counters and histograms are atomics: recording never takes a lock, so the
// request path and the step never wait for a scrape or for each other.
//
// Fed by: the scheduler (Metrics is a SchedulerListener: steps, slot counts), the API's HTTP
// handler (requests by status code), the instrumenting decorators of external_call_observer.h
// (external calls and file system checks), the maintenance endpoint, and the notifier
// (count_notification_dropped). One instance per server; thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "celos/event_source.h"
#include "celos/external_call_observer.h"
#include "celos/mutex.h"
#include "celos/scheduler.h"
#include "celos/state_db.h"
#include "celos/workflow.h"

namespace celos {

// A Prometheus histogram with fixed upper bounds (seconds), updated without locks.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // `labels` is empty or `service="oozie",operation="submit"` (without braces).
  void render(std::string& out, std::string_view name, std::string_view labels) const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // per bound, not cumulative
  std::atomic<std::uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

// The label values of SPEC §16.
inline constexpr std::array<std::string_view, 5> kMetricServices{"oozie", "command", "slurm",
                                                                 "webhdfs", "file"};
inline constexpr std::array<std::string_view, 6> kMetricOperations{"submit", "start",  "status",
                                                                   "kill",   "exists", "delete"};

class Metrics final : public SchedulerListener, public ExternalCallObserver {
 public:
  Metrics();

  // SchedulerListener: a step's count, duration and slot counts; API changes adjust the counts.
  void on_slot_changes(const std::vector<SlotChange>& changes) override;
  void on_step(const StepReport& report) override;

  void count_http_request(int status);
  // ExternalCallObserver: one call of an external service or file system; unknown labels are
  // ignored.
  void on_external_call(std::string_view service, std::string_view operation, double seconds,
                        bool ok) override;
  void count_notification_dropped();
  // celos_event_to_submit_seconds{event}: from an event (issue 28) to the submission of a slot
  // of a workflow it stepped.
  void observe_event_to_submit(EventSource source, double seconds);
  // Refusals not written to the audit trail (rate limit; celos_audit_suppressed_total) and
  // webhooks not called because they point at loopback or this server
  // (celos_webhooks_refused_total).
  void count_audit_suppressed(std::uint64_t records);
  void count_webhook_refused();
  void set_maintenance(MaintenanceMode mode);
  // celos_leader: the cluster's view (a file-backend server is always the leader).
  void set_leader_source(std::function<bool()> is_leader);
  // celos_clock_skew_seconds: the database's clock minus this node's (nothing: not rendered).
  void set_clock_skew_source(std::function<std::optional<double>()> seconds);
  // More metrics, rendered by their owners at the end of /metrics (the OpenLineage sender's:
  // celos_openlineage_*). Call before serving.
  void add_source(std::function<void(std::string& out)> render);

  // Slots in RUNNING as of the last step (adjusted by API kills since).
  int running_slots() const;

  // The text of /metrics. `config` supplies celos_workflows and celos_workflow_load_errors
  // (may be null while loading).
  std::string render(const WorkflowConfig* config) const;

 private:
  static constexpr int kHttpCodes = 600;
  void render_slots(std::string& out) const;
  void render_external(std::string& out) const;
  // Service limits and backfills (metrics_limits.cc): what a step reports, and their text.
  void record_limits(const StepReport& report);
  void render_limits(std::string& out) const;
  void render_backfills(std::string& out) const;
  // Event-to-submit latencies and HTTP answers.
  void render_events(std::string& out) const;
  // This node: leadership, clock skew, maintenance.
  void render_node(std::string& out) const;
  // Dropped notifications, suppressed audits, refused webhooks, deadlines.
  void render_incidents(std::string& out) const;

  std::atomic<std::uint64_t> steps_{0};
  Histogram step_duration_;
  std::array<std::atomic<std::uint64_t>, kMetricServices.size()> submissions_{};
  std::array<std::atomic<std::uint64_t>, kMetricServices.size()> call_errors_{};
  std::vector<std::unique_ptr<Histogram>> call_durations_;  // [service][operation]
  std::array<std::atomic<std::uint64_t>, kHttpCodes> http_{};
  std::atomic<std::uint64_t> notifications_dropped_{0};
  std::vector<std::unique_ptr<Histogram>> event_to_submit_;  // [EventSource]
  std::atomic<std::uint64_t> audit_suppressed_{0};
  std::atomic<std::uint64_t> webhooks_refused_{0};
  std::atomic<std::uint64_t> deadlines_missed_{0};  // celos_deadline_missed_total
  std::atomic<long long> deadlines_at_risk_{0};     // celos_deadlines_at_risk, the last step's
  std::atomic<int> maintenance_{0};
  std::function<bool()> is_leader_;
  std::function<std::optional<double>()> clock_skew_;
  std::vector<std::function<void(std::string&)>> sources_;
  // The slots the last step looked at, by status (adjusted by API changes since); written by
  // the step and API mutations (serialized), read by scrapes.
  mutable Mutex slots_mutex_;
  std::array<long long, kSlotStatusCount> slots_ GUARDED_BY(slots_mutex_){};
  // celos_service_limit_deferred_total by (endpoint, limit); the backfill plans as of the last
  // step; celos_backfill_slots_admitted_total.
  mutable Mutex limits_mutex_;
  std::map<std::pair<std::string, ServiceLimit>, std::uint64_t> deferred_ GUARDED_BY(limits_mutex_);
  std::vector<BackfillPlan> backfills_ GUARDED_BY(limits_mutex_);
  std::atomic<std::uint64_t> backfill_admitted_{0};
};

}  // namespace celos
