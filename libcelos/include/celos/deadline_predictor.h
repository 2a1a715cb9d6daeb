// The deadline predictor of celos (issue 27, docs/deadlines.md): when will a slot that is not
// final be SUCCESS, judged from its workflow's own history (and, for a run that overran, from
// every workflow's while its own is short).
//
// It learns from the changes the scheduler commits (a SchedulerListener): for each slot that
// reaches SUCCESS, how long after its slot time it became READY, how long it then waited to
// be RUNNING, how long it ran, and the whole ways from the slot time and from READY to
// SUCCESS. For each workflow it keeps the last kMaxSamples of each, with the slot's hour of day
// (UTC). An hour is judged by its own samples once it has kMinHourSamples (else by the whole
// day's), so a nightly batch that runs twice as long is judged by its nights at night.
//
// A slot is predicted to finish at the point that a quarter of the past slots in its place
// finished before (kUsualQuantile): AT_RISK means more than three in four such slots ended
// after the deadline. Measured as a whole way, not as a sum of each step's median: on a workflow
// whose deadline is just after its usual finish, the sum of medians (each measured in whole steps)
// lay after the deadline while most slots met it.
//
//   WAITING   input not later than its p90: slot + q(slot -> SUCCESS of the hour)
//             input later: now + p90(queue) + p90(run) (the input may come now; it is flagged
//             once even that would end after the deadline)
//   READY     ready + q(READY -> SUCCESS of the hour)
//   RUNNING   started + the kRunQuantile of the past runs that lasted at least as long as this
//             one has so far. Past the usual run, while the workflow has fewer than kMinTail such
//             runs of its own, of every workflow's runs that overran as far (each over its hour's
//             median): slow runs are rare, and one workflow's few are a poor guide. Past every
//             run: now + how far it is past p50(run).
//
// With fewer than kMinSamples runs it predicts nothing (the slot stays PENDING until its
// deadline). The memory is the server's: after a restart it learns again from new changes.
// Thread-safe (the step learns, API reads predict).
#pragma once

#include <array>
#include <chrono>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "celos/deadline.h"
#include "celos/mutex.h"
#include "celos/scheduler.h"

namespace celos {

class HistoryPredictor final : public DeadlinePredictor, public SchedulerListener {
 public:
  static constexpr std::size_t kMaxSamples = 720;  // 30 days of an hourly workflow
  static constexpr std::size_t kMinSamples = 3;
  // Three: after three days an hourly workflow's hours are judged on their own; before, a batch
  // that runs twice as long at night had its day slots judged by the whole day's (the night's).
  static constexpr std::size_t kMinHourSamples = 3;
  static constexpr double kUsualQuantile = 0.25;
  // A running job is at risk when three in five past runs as long ended after its deadline. On
  // the replay of bench/deadlines (bench/README.md, "Deadlines"), a quarter warned too few misses
  // 15 minutes ahead, and the median flagged more runs that then ended in time.
  static constexpr double kRunQuantile = 0.4;
  // A workflow's own overruns judge it once it has this many (a few in a hundred runs overrun,
  // so a month of an hourly workflow has about twenty); before, every workflow's do.
  static constexpr std::size_t kMinTail = 30;
  static constexpr std::size_t kFleetSamples = 20000;  // every workflow's overrun ratios

  void on_slot_changes(const std::vector<SlotChange>& changes) override;
  DeadlineForecast predict(const Workflow& workflow, const SlotState& slot,
                           Time now) const override;

 private:
  enum Phase { kReady, kQueue, kRun, kTotal, kFromReady, kPhases };
  struct Sample {
    int hour = 0;  // the slot's hour of day, UTC
    double seconds = 0;
  };
  // One workflow's history and the percentiles computed from it.
  struct History {
    std::array<std::deque<Sample>, kPhases> samples;
    bool dirty = true;
    // [phase][hour], hour 24 = the whole day; negative = not enough samples.
    std::array<std::array<double, 25>, kPhases> p90{};
    std::array<std::array<double, 25>, kPhases> p50{};
    std::array<std::array<double, 25>, kPhases> usual{};  // the kUsualQuantile
  };
  // A slot in flight: when it became READY and RUNNING.
  struct Open {
    Time ready{};
    Time running{};
  };

  void learn(const SlotChange& change) REQUIRES(mutex_);
  void add(const std::string& workflow, Phase phase, Time slot, std::chrono::milliseconds took)
      REQUIRES(mutex_);
  const History* history(const std::string& workflow) const REQUIRES(mutex_);
  static void percentiles(History& h, Phase phase);
  // The p90 (or p50) of `phase` for a slot at `hour`; negative when unknown.
  static double percentile(const History& h, Phase phase, int hour, bool p50 = false);
  // The kUsualQuantile of `phase` at `hour` (zero when unknown).
  static double usual(const History& h, Phase phase, int hour);
  // Whether `hour`'s own percentiles stand for it (percentile() picks them).
  static bool own_hour(const History& h, Phase phase, int hour);
  // The kRunQuantile of the runs (of `hour`, when own_hour) at least `seconds` long, and how many
  // there were; negative: none.
  static std::pair<double, std::size_t> like_longer(const History& h, int hour, double seconds);
  // The same over every workflow's runs that overran as far as `ratio` (run over its median).
  double like_overrun(double ratio) const REQUIRES(mutex_);
  // When the open slot `id` became READY (&Open::ready) or RUNNING; `now` when not seen.
  Time opened(const SlotId& id, Time Open::*at, Time now) const REQUIRES(mutex_);
  DeadlineForecast predict_running(const History& h, const SlotState& slot, int hour,
                                   Time now) const REQUIRES(mutex_);

  mutable Mutex mutex_;
  // Every workflow's runs, each over its hour's median as last computed.
  std::deque<double> fleet_ratios_ GUARDED_BY(mutex_);
  // fleet_ratios_ sorted, by the first like_overrun() after they changed; empty = to sort.
  mutable std::vector<double> fleet_sorted_ GUARDED_BY(mutex_);
  mutable std::map<std::string, History, std::less<>> histories_ GUARDED_BY(mutex_);
  std::map<SlotId, Open> open_ GUARDED_BY(mutex_);
};

}  // namespace celos
