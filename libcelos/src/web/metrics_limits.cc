// The /metrics of issue 29: picks held back by celos.serviceLimits, and the backfill plans'
// progress as of the last step (docs/operations.md, "Metrics").
#include <fmt/format.h>

#include "celos/metrics.h"
#include "web/metrics_text.h"

namespace celos {

std::string metric_label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void Metrics::record_limits(const StepReport& report) {
  backfill_admitted_.fetch_add(static_cast<std::uint64_t>(report.backfill_admitted),
                               std::memory_order_relaxed);
  MutexLock lock(limits_mutex_);
  for (const auto& [key, n] : report.limit_deferred) deferred_[key] += std::uint64_t(n);
  if (report.maintenance != MaintenanceMode::kPause) backfills_ = report.backfills;
}

void Metrics::render_limits(std::string& out) const {
  metric_header(out, "celos_service_limit_deferred_total", "counter",
                "Picks not submitted because of celos.serviceLimits (they stay READY), by "
                "endpoint and limit.");
  MutexLock lock(limits_mutex_);
  for (const auto& [key, n] : deferred_) {
    fmt::format_to(std::back_inserter(out),
                   "celos_service_limit_deferred_total{{endpoint=\"{}\",limit=\"{}\"}} {}\n",
                   metric_label(key.first), to_string(key.second), n);
  }
}

void Metrics::render_backfills(std::string& out) const {
  metric_header(out, "celos_backfill_slots_admitted_total", "counter",
                "Slots admitted by backfill plans (each slot once per plan).");
  fmt::format_to(std::back_inserter(out), "celos_backfill_slots_admitted_total {}\n",
                 backfill_admitted_.load(std::memory_order_relaxed));
  MutexLock lock(limits_mutex_);
  metric_header(out, "celos_backfills", "gauge", "Backfill plans by state, as of the last step.");
  for (BackfillState state : {BackfillState::kRunning, BackfillState::kPaused,
                              BackfillState::kCancelled, BackfillState::kDone}) {
    std::size_t n = 0;
    for (const BackfillPlan& plan : backfills_) n += plan.state == state;
    fmt::format_to(std::back_inserter(out), "celos_backfills{{state=\"{}\"}} {}\n",
                   to_string(state), n);
  }
  metric_header(out, "celos_backfill_slots", "gauge",
                "The slots of each running or paused backfill plan as of the last step: total, "
                "PENDING (not admitted yet), IN_FLIGHT (admitted, not ended) and the ended ones "
                "by final status.");
  for (const BackfillPlan& plan : backfills_) {
    if (plan.state != BackfillState::kRunning && plan.state != BackfillState::kPaused) continue;
    const std::string id = metric_label(plan.id);
    const auto line = [&](std::string_view state, std::size_t n) {
      fmt::format_to(std::back_inserter(out),
                     "celos_backfill_slots{{plan=\"{}\",state=\"{}\"}} {}\n", id, state, n);
    };
    const std::size_t started = plan.ended_count() + plan.in_flight.size();
    line("total", plan.total);
    line("PENDING", started >= plan.total ? 0 : plan.total - started);
    line("IN_FLIGHT", plan.in_flight.size());
    for (const auto& [status, n] : plan.ended) line(to_string(status), n);
  }
}

}  // namespace celos
