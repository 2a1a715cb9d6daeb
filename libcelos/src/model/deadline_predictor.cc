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

// The index of the q-quantile (nearest rank) in `n` sorted values (n > 0).
std::size_t nearest_rank(std::size_t n, double q) {
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
  return std::clamp<std::size_t>(rank, 1, n) - 1;
}

// The q-quantile (nearest rank) of `values`, sorted in place.
double quantile(std::vector<double>& values, double q) {
  std::sort(values.begin(), values.end());
  return values[nearest_rank(values.size(), q)];
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
      if (it == open_.end()) break;
      if (it->second.running != Time{}) add(wf, kRun, to.id.time, change.at - it->second.running);
      if (it->second.ready != Time{}) add(wf, kFromReady, to.id.time, change.at - it->second.ready);
      add(wf, kTotal, to.id.time, change.at - to.id.time);
      open_.erase(it);
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
  if (phase != kRun) return;
  // Over the hour's median as the last prediction computed it (not recomputed here: a step that
  // ends many runs would sort every history again).
  if (const double level = h.p50[kRun][std::size_t(samples.back().hour)]; level > 0) {
    fleet_ratios_.push_back(samples.back().seconds / level);
    if (fleet_ratios_.size() > kFleetSamples) fleet_ratios_.pop_front();
    fleet_sorted_.clear();
  }
}

const HistoryPredictor::History* HistoryPredictor::history(const std::string& workflow) const {
  auto it = histories_.find(workflow);
  if (it == histories_.end()) return nullptr;
  History& h = it->second;
  if (!h.dirty) return &h;
  for (int phase = 0; phase < kPhases; ++phase) percentiles(h, Phase(phase));
  h.dirty = false;
  return &h;
}

void HistoryPredictor::percentiles(History& h, Phase phase) {
  const auto& samples = h.samples[phase];
  std::array<std::vector<double>, 25> by_hour;
  for (const Sample& s : samples) {
    by_hour[std::size_t(s.hour)].push_back(s.seconds);
    by_hour[24].push_back(s.seconds);
  }
  auto& p50 = h.p50[phase];
  auto& p90 = h.p90[phase];
  p50.fill(-1);
  p90.fill(-1);
  h.usual[phase].fill(-1);
  if (by_hour[24].size() < kMinSamples) return;
  // Only the whole spans are judged by their quantile (predict()); the steps by p50 and p90.
  if (phase == kTotal || phase == kFromReady) {
    for (std::size_t hour = 0; hour < 25; ++hour) {
      auto& own = by_hour[hour].size() >= kMinHourSamples ? by_hour[hour] : by_hour[24];
      h.usual[phase][hour] = quantile(own, kUsualQuantile);
    }
  }
  p90[24] = quantile(by_hour[24], 0.9);
  p50[24] = quantile(by_hour[24], 0.5);
  for (std::size_t hour = 0; hour < 24; ++hour) {
    p50[hour] = by_hour[hour].size() >= kMinHourSamples ? quantile(by_hour[hour], 0.5) : p50[24];
  }
  // The spread: the p90 of each sample over its hour's median, pooled over the hours. A nightly
  // batch that runs twice as long widens neither its nights' nor its days' p90, and one late
  // input in an hour's few samples does not become that hour's p90.
  std::vector<double> ratios;
  for (const Sample& s : samples) {
    if (const double level = p50[std::size_t(s.hour)]; level > 0)
      ratios.push_back(s.seconds / level);
  }
  const double spread = ratios.empty() ? -1 : quantile(ratios, 0.9);
  for (std::size_t hour = 0; hour < 24; ++hour) {
    p90[hour] = p50[hour] > 0 && spread > 0 ? p50[hour] * spread : p90[24];
  }
}

bool HistoryPredictor::own_hour(const History& h, Phase phase, int hour) {
  // Where the hour's median differs from the day's by more than a fifth. Medians, not p90s: an
  // hour has a few samples, and one late input among them is its p90.
  const double day = h.p50[phase][24];
  const double own = h.p50[phase][std::size_t(hour)];
  return own >= 0 && day > 0 && std::abs(own - day) > 0.2 * day;
}

double HistoryPredictor::percentile(const History& h, Phase phase, int hour, bool p50) {
  return (p50 ? h.p50 : h.p90)[phase][std::size_t(hour)];
}

double HistoryPredictor::usual(const History& h, Phase phase, int hour) {
  return std::max(0.0, h.usual[phase][std::size_t(hour)]);
}

std::pair<double, std::size_t> HistoryPredictor::like_longer(const History& h, int hour,
                                                             double seconds) {
  const bool own = own_hour(h, kRun, hour);
  std::vector<double> longer;
  for (const Sample& s : h.samples[kRun]) {
    if (s.seconds >= seconds && (!own || s.hour == hour)) longer.push_back(s.seconds);
  }
  if (longer.empty()) return {-1, 0};
  return {quantile(longer, kRunQuantile), longer.size()};
}

double HistoryPredictor::like_overrun(double ratio) const {
  if (fleet_sorted_.empty()) {  // sorted once after the ratios changed, not once per slot
    fleet_sorted_.assign(fleet_ratios_.begin(), fleet_ratios_.end());
    std::sort(fleet_sorted_.begin(), fleet_sorted_.end());
  }
  const auto longer = std::lower_bound(fleet_sorted_.begin(), fleet_sorted_.end(), ratio);
  const auto n = static_cast<std::size_t>(fleet_sorted_.end() - longer);
  return n == 0 ? -1 : longer[static_cast<std::ptrdiff_t>(nearest_rank(n, kRunQuantile))];
}

Time HistoryPredictor::opened(const SlotId& id, Time Open::*at, Time now) const {
  auto it = open_.find(id);
  return it != open_.end() && it->second.*at != Time{} ? it->second.*at : now;
}

DeadlineForecast HistoryPredictor::predict(const Workflow& workflow, const SlotState& slot,
                                           Time now) const {
  MutexLock lock(mutex_);
  const History* h = history(workflow.id);
  const int hour = hour_of(slot.id.time);
  if (!h || percentile(*h, kRun, hour) < 0)
    return {std::nullopt, "not enough history to predict from"};
  const auto p = [&](Phase phase, bool p50) {
    return std::max(0.0, percentile(*h, phase, hour, p50));
  };
  switch (slot.status) {
    case SlotStatus::kWaiting: {
      if (now <= slot.id.time + ms(p(kReady, false))) {
        return {slot.id.time + ms(usual(*h, kTotal, hour)),
                fmt::format("input usually ready {} after the slot time; the job usually runs {}; "
                            "3 in 4 slots of this hour were SUCCESS {} or more after it",
                            minutes_text(p(kReady, true)), minutes_text(p(kRun, true)),
                            minutes_text(usual(*h, kTotal, hour)))};
      }
      return {now + ms(p(kQueue, false) + p(kRun, false)),
              fmt::format("input late: not ready {} after the slot time, usually within {} "
                          "(p90); the job runs up to {} (p90)",
                          minutes_text(std::chrono::duration<double>(now - slot.id.time).count()),
                          minutes_text(p(kReady, false)), minutes_text(p(kRun, false)))};
    }
    case SlotStatus::kReady: {
      const Time ready = opened(slot.id, &Open::ready, now);
      return {std::max(now, ready + ms(usual(*h, kFromReady, hour))),
              fmt::format("ready; the job usually runs {}; 3 in 4 slots were SUCCESS {} or more "
                          "after READY",
                          minutes_text(p(kRun, true)), minutes_text(usual(*h, kFromReady, hour)))};
    }
    case SlotStatus::kRunning:
      return predict_running(*h, slot, hour, now);
    default:
      return {};
  }
}

DeadlineForecast HistoryPredictor::predict_running(const History& h, const SlotState& slot,
                                                   int hour, Time now) const {
  const Time started = opened(slot.id, &Open::running, now);
  const double ran = std::chrono::duration<double>(now - started).count();
  const double median = percentile(h, kRun, hour, true);
  // As long as the past runs that lasted at least this long; while the workflow has few of
  // those past its usual run, as every workflow's that overran as far; beyond every one, as far
  // again past the usual run.
  auto [like, own] = like_longer(h, hour, ran);
  bool fleet = false;
  if (own < kMinTail && ran > median && median > 0) {
    if (const double ratio = like_overrun(ran / median); ratio > 0) {
      like = ratio * median;
      fleet = true;
    }
  }
  if (like < 0) {
    return {now + ms(std::max(60.0, ran - median)),
            fmt::format("running {}, longer than any run before (usually {})", minutes_text(ran),
                        minutes_text(median))};
  }
  const Time finish = std::max(now, started + ms(like));
  if (ran <= median) return {finish, fmt::format("the job usually runs {}", minutes_text(like))};
  return {finish, fmt::format("running {}, longer than usual ({}): {} that lasted this long "
                              "took {} or more (3 in 5)",
                              minutes_text(ran), minutes_text(median),
                              fleet ? "every workflow's runs" : "its runs", minutes_text(like))};
}

}  // namespace celos
