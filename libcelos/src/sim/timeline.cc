#include "sim/timeline.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace celos::sim {

namespace {

void append_quoted(std::string& out, std::string_view text) {
  out += '"';
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
  out += '"';
}

}  // namespace

std::string json_quote(std::string_view text) {
  std::string out;
  append_quoted(out, text);
  return out;
}

// Appends rather than formats: a simulation writes millions of these lines (a third of its
// serial step time went to fmt here).
std::string timeline_line(const SlotChange& c) {
  std::string line;
  line.reserve(160);
  line += R"({"at":")";
  line += format_time(c.at);
  line += R"(","workflow":)";
  append_quoted(line, c.to.id.workflow);
  line += R"(,"slot":")";
  line += format_time(c.to.id.time);
  line += R"(","from":)";
  if (c.from) {
    line += '"';
    line += to_string(c.from->status);
    line += '"';
  } else {
    line += "null";
  }
  line += R"(,"to":")";
  line += to_string(c.to.status);
  line += R"(","retryCount":)";
  line += std::to_string(c.to.retry_count);
  if (c.to.external_id) {
    line += R"(,"externalID":)";
    append_quoted(line, *c.to.external_id);
  }
  if (c.to.message) {
    line += R"(,"message":)";
    append_quoted(line, *c.to.message);
  }
  line += R"(,"by":)";
  append_quoted(line, c.by);
  line += "}\n";
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
  // Sorts positions, not the changes: each is two slot states, and moving them cost more than
  // the comparisons.
  std::vector<std::uint32_t> order(pending_.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [this](std::uint32_t a, std::uint32_t b) {
    return pending_[a].to.id < pending_[b].to.id;
  });
  for (const std::uint32_t i : order) {
    account(pending_[i]);
    if (out_ != nullptr) *out_ << timeline_line(pending_[i]);
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
