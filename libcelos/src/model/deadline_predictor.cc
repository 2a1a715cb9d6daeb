// The history predictor (celos/deadline_predictor.h). Percentiles are recomputed lazily, once
// per workflow after its history changed, so that a step of many workflows asks cheaply.
#include "celos/deadline_predictor.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace celos {
namespace {

using std::chrono::milliseconds;

int hour_of(Time t) { return to_civil(t).hour; }

std::string minutes_text(double seconds) {
  const auto m = static_cast<long long>(std::ceil(seconds / 60));
  if (m < 120) return fmt::format("{} min", m);
  return fmt::format("{}h{:02}", m / 60, m % 60);
}

milliseconds ms(double seconds) { return milliseconds(static_cast<long long>(seconds * 1000)); }

// The q-quantile (nearest rank) of `values`, sorted in place.
double quantile(std::vector<double>& values, double q) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

}  // namespace

void HistoryPredictor::on_slot_changes(const std::vector<SlotChange>& changes) {
  MutexLock lock(mutex_);
  for (const SlotChange& c : changes) learn(c);
}

void HistoryPredictor::learn(const SlotChange& change) {
  const SlotState& to = change.to;
  if (change.from && change.from->status == to.status) return;
  const std::string& wf = to.id.workflow;
  switch (to.status) {
    case SlotStatus::kReady:
      open_[to.id].ready = change.at;
      add(wf, kReady, to.id.time, change.at - to.id.time);
      break;
    case SlotStatus::kRunning: {
      Open& o = open_[to.id];
      o.running = change.at;
      if (o.ready != Time{}) add(wf, kQueue, to.id.time, change.at - o.ready);
      break;
    }
    case SlotStatus::kSuccess: {
      auto it = open_.find(to.id);
      if (it != open_.end() && it->second.running != Time{}) {
        add(wf, kRun, to.id.time, change.at - it->second.running);
      }
      if (it != open_.end()) open_.erase(it);
      break;
    }
    default:
      if (is_final(to.status)) open_.erase(to.id);
      break;
  }
}

void HistoryPredictor::add(const std::string& workflow, Phase phase, Time slot, milliseconds took) {
  History& h = histories_[workflow];
  auto& samples = h.samples[phase];
  samples.push_back({hour_of(slot), std::max(0.0, took.count() / 1000.0)});
  if (samples.size() > kMaxSamples) samples.pop_front();
  h.dirty = true;
}

const HistoryPredictor::History* HistoryPredictor::history(const std::string& workflow) const {
  auto it = histories_.find(workflow);
  if (it == histories_.end()) return nullptr;
  History& h = it->second;
  if (!h.dirty) return &h;
  for (int phase = 0; phase < kPhases; ++phase) {
    std::array<std::vector<double>, 25> by_hour;
    for (const Sample& s : h.samples[phase]) {
      by_hour[std::size_t(s.hour)].push_back(s.seconds);
      by_hour[24].push_back(s.seconds);
    }
    for (std::size_t hour = 0; hour < 25; ++hour) {
      auto& values = by_hour[hour];
      const std::size_t least = hour == 24 ? kMinSamples : kMinHourSamples;
      h.p90[phase][hour] = values.size() >= least ? quantile(values, 0.9) : -1;
      h.p50[phase][hour] = values.size() >= least ? quantile(values, 0.5) : -1;
    }
  }
  h.dirty = false;
  return &h;
}

double HistoryPredictor::percentile(const History& h, Phase phase, int hour, bool p50) {
  const auto& table = p50 ? h.p50[phase] : h.p90[phase];
  const double day = table[24];
  const double own = table[std::size_t(hour)];
  // The hour's own where it differs from the day's by more than a fifth.
  if (own >= 0 && day >= 0 && std::abs(own - day) > 0.2 * day) return own;
  return day;
}

DeadlineForecast HistoryPredictor::predict(const Workflow& workflow, const SlotState& slot,
                                           Time now) const {
  MutexLock lock(mutex_);
  const History* h = history(workflow.id);
  const int hour = hour_of(slot.id.time);
  const double run = h ? percentile(*h, kRun, hour) : -1;
  if (run < 0) return {std::nullopt, "not enough history to predict from"};
  const double queue = std::max(0.0, percentile(*h, kQueue, hour));
  const double ready = std::max(0.0, percentile(*h, kReady, hour));
  const std::string runs = fmt::format("the job usually runs {} (p90)", minutes_text(run));
  switch (slot.status) {
    case SlotStatus::kWaiting: {
      const Time usual = slot.id.time + ms(ready);
      if (now <= usual) {
        return {usual + ms(queue + run),
                fmt::format("input usually ready {} after the slot time (p90); {}",
                            minutes_text(ready), runs)};
      }
      return {now + ms(queue + run),
              fmt::format("input late: not ready {} after the slot time, usually within {} "
                          "(p90); {}",
                          minutes_text(std::chrono::duration<double>(now - slot.id.time).count()),
                          minutes_text(ready), runs)};
    }
    case SlotStatus::kReady:
      return {now + ms(queue + run),
              fmt::format("ready, usually running within {} (p90); {}", minutes_text(queue), runs)};
    case SlotStatus::kRunning: {
      auto it = open_.find(slot.id);
      const Time started =
          it != open_.end() && it->second.running != Time{} ? it->second.running : now;
      const Time usual = started + ms(run);
      if (now <= usual) return {usual, runs};
      // Overdue: at least the usual spread more.
      const double spread = std::max(60.0, run - percentile(*h, kRun, hour, true));
      return {
          now + ms(spread),
          fmt::format("running {}, longer than usual: {}",
                      minutes_text(std::chrono::duration<double>(now - started).count()), runs)};
    }
    default:
      return {};
  }
}

}  // namespace celos
