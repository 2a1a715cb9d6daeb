// The deadline predictor of celos (issue 27, docs/deadlines.md): when will a slot that is not
// final be SUCCESS, judged from its workflow's own history.
//
// It learns from the changes the scheduler commits (a SchedulerListener): for each slot that
// reaches SUCCESS, how long after its slot time it became READY, how long it then waited to
// be RUNNING, and how long it ran. For each workflow it keeps the last kMaxSamples of each, with
// the slot's hour of day (UTC), and predicts with their 90th percentiles by hour of day: the
// hour's median (the whole day's while the hour has fewer than kMinHourSamples) times the
// workflow's spread, the p90 of every sample over its own hour's median. So a nightly batch that
// runs twice as long is judged by its nights at night and by its days by day, and one late
// input among an hour's few samples does not become that hour's p90.
//
//   WAITING   ready at max(slot + p90(ready), now), then + p90(queue) + p90(run)
//   READY     now + p90(queue) + p90(run)
//   RUNNING   started + p90(run); once it ran longer than that (overdue): started + the median
//             of the past runs that lasted longer than it has run so far (a slow run is judged
//             by the slow runs before it), or, when none did, now + how far it is past p50(run)
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

  void on_slot_changes(const std::vector<SlotChange>& changes) override;
  DeadlineForecast predict(const Workflow& workflow, const SlotState& slot,
                           Time now) const override;

 private:
  enum Phase { kReady, kQueue, kRun, kPhases };
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
  // Whether `hour`'s own percentiles stand for it (percentile() picks them).
  static bool own_hour(const History& h, Phase phase, int hour);
  // The first quartile of the runs (of `hour`, when own_hour) at least `seconds` long; negative:
  // none. The quartile, not the median: on the 30-day replay (bench/deadlines) the median flagged
  // more overruns that ended in time (15.3 % of all flags against 12.8 %).
  static double quartile_longer(const History& h, int hour, double seconds);
  DeadlineForecast predict_running(const History& h, const SlotState& slot, int hour,
                                   Time now) const REQUIRES(mutex_);

  mutable Mutex mutex_;
  mutable std::map<std::string, History, std::less<>> histories_ GUARDED_BY(mutex_);
  std::map<SlotId, Open> open_ GUARDED_BY(mutex_);
};

}  // namespace celos
