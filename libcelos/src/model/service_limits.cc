// Rate limits per external service endpoint (celos/service_limits.h): the tokens, the book of
// RUNNING slots, the share of one step's capacity, and the declarations of the workflow files.
#include "celos/service_limits.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "celos/workflow.h"

namespace celos {

std::string_view to_string(ServiceLimit limit) {
  return limit == ServiceLimit::kSubmitsPerSecond ? "submitsPerSecond" : "maxConcurrent";
}

TokenRule token_rule(double submits_per_second) {
  if (submits_per_second >= 1) {
    return {static_cast<int>(std::min(std::floor(submits_per_second), 1e6)),
            std::chrono::milliseconds(1000)};
  }
  return {1,
          std::chrono::milliseconds(static_cast<long long>(std::ceil(1000 / submits_per_second)))};
}

int ServiceLimiter::reserve(const std::string& endpoint, double submits_per_second, int want,
                            Time now) {
  const TokenRule rule = token_rule(submits_per_second);
  MutexLock lock(mutex_);
  Bucket& b = buckets_[endpoint];
  b.back.erase(b.back.begin(), b.back.upper_bound(now));  // back at `now`: usable again
  const int free = rule.tokens - b.reserved - static_cast<int>(b.back.size());
  const int granted = std::clamp(want, 0, std::max(0, free));
  b.reserved += granted;
  b.period = rule.period;  // the latest rule (a reload may change it)
  return granted;
}

void ServiceLimiter::spend(const std::string& endpoint, Time at) {
  MutexLock lock(mutex_);
  Bucket& b = buckets_[endpoint];
  if (b.reserved > 0) --b.reserved;
  b.back.insert(at + b.period);
}

void ServiceLimiter::release(const std::string& endpoint, int n) {
  MutexLock lock(mutex_);
  Bucket& b = buckets_[endpoint];
  b.reserved = std::max(0, b.reserved - n);
}

void ServiceLimiter::record_running(RunningBook running, bool full) {
  MutexLock lock(mutex_);
  if (full) {
    running_ = std::move(running);
    full_seen_ = true;
    return;
  }
  for (auto& [id, entry] : running) running_[id] = std::move(entry);
}

std::optional<std::map<std::string, int>> ServiceLimiter::running_elsewhere(
    const std::set<std::string>& stepped) const {
  MutexLock lock(mutex_);
  if (!full_seen_) return std::nullopt;
  std::map<std::string, int> out;
  for (const auto& [id, entry] : running_) {
    if (!stepped.count(id)) out[entry.first] += entry.second;
  }
  return out;
}

void ServiceLimiter::forget_running() {
  MutexLock lock(mutex_);
  running_.clear();
  full_seen_ = false;
}

std::vector<std::size_t> share_capacity(
    const std::vector<std::pair<std::size_t, std::size_t>>& wants, std::size_t capacity) {
  std::vector<std::size_t> granted(wants.size(), 0);
  for (int lane = 0; lane < 2; ++lane) {
    // Each round gives one more pick of this lane to every workflow that still wants one.
    bool any = true;
    while (capacity > 0 && any) {
      any = false;
      for (std::size_t i = 0; i < wants.size() && capacity > 0; ++i) {
        const std::size_t lane_end = lane == 0 ? wants[i].first : wants[i].first + wants[i].second;
        if (granted[i] < lane_end) {
          ++granted[i];
          --capacity;
          any = true;
        }
      }
    }
  }
  return granted;
}

void link_service_limits(WorkflowConfig& config,
                         const std::vector<ServiceLimitDeclaration>& declarations) {
  std::map<std::string, const ServiceLimitDeclaration*> first;
  for (const ServiceLimitDeclaration& d : declarations) {
    auto [it, inserted] = first.emplace(d.endpoint, &d);
    if (inserted) {
      config.service_limits[d.endpoint] = d.limits;
    } else if (!(it->second->limits == d.limits)) {
      config.errors.push_back(LoadError{
          d.file, d.line,
          fmt::format("celos.serviceLimits: endpoint \"{}\" already has other limits ({} line "
                      "{}); this declaration is ignored",
                      d.endpoint, it->second->file, it->second->line)});
    }
  }
}

}  // namespace celos
