#include "sim/timeline.h"

#include <algorithm>

#include <fmt/format.h>

namespace celos::sim {

std::string json_quote(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += fmt::format("\\u{:04x}", u);  // newlines, tabs and the rest alike
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string timeline_line(const SlotChange& c) {
  std::string line =
      fmt::format(R"({{"at":"{}","workflow":{},"slot":"{}","from":{},"to":"{}","retryCount":{})",
                  format_time(c.at), json_quote(c.to.id.workflow), format_time(c.to.id.time),
                  c.from ? fmt::format("\"{}\"", to_string(c.from->status)) : "null",
                  to_string(c.to.status), c.to.retry_count);
  if (c.to.external_id) line += ",\"externalID\":" + json_quote(*c.to.external_id);
  if (c.to.message) line += ",\"message\":" + json_quote(*c.to.message);
  line += ",\"by\":" + json_quote(c.by) + "}\n";
  return line;
}

void Durations::add(std::chrono::milliseconds d) {
  ++count;
  total_ms += d.count();
  max_ms = std::max<std::int64_t>(max_ms, d.count());
}

void Timeline::on_slot_changes(const std::vector<SlotChange>& changes) {
  pending_.insert(pending_.end(), changes.begin(), changes.end());
}

void Timeline::on_step(const StepReport& report) {
  step_errors_ += std::int64_t(report.errors.size());
  if (first_step_error_.empty() && !report.errors.empty()) {
    first_step_error_ = format_time(report.now) + ": " + report.errors.front();
  }
  flush();
}

void Timeline::flush() {
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const SlotChange& a, const SlotChange& b) { return a.to.id < b.to.id; });
  for (const SlotChange& c : pending_) {
    account(c);
    if (out_ != nullptr) *out_ << timeline_line(c);
  }
  changes_ += std::int64_t(pending_.size());
  pending_.clear();
}

void Timeline::account(const SlotChange& c) {
  const SlotStatus from = c.from ? c.from->status : SlotStatus::kWaiting;
  const SlotStatus to = c.to.status;
  if (to == SlotStatus::kFailure) failures_.emplace_back(c.at, c.to.id);
  if (from == to) return;
  WorkflowTimes& times = times_[c.to.id.workflow];
  if (to == SlotStatus::kRunning) {
    if (c.to.retry_count == 0) times.wait.add(c.at - c.to.id.time);
    running_since_[c.to.id] = c.at;
  } else if (from == SlotStatus::kRunning) {
    auto it = running_since_.find(c.to.id);
    if (it != running_since_.end()) {
      times.run.add(c.at - it->second);
      running_since_.erase(it);
    }
  }
}

}  // namespace celos::sim
