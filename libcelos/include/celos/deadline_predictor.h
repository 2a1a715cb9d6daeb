// The deadline predictor of celos (issue 27, docs/deadlines.md): when will a slot that is not
// final be SUCCESS, judged from its workflow's own history.
//
// It learns from the changes the scheduler commits (a SchedulerListener): for each slot that
// reaches SUCCESS, how long after its slot time it became READY, how long it then waited to
// be RUNNING, and how long it ran. For each workflow it keeps the last kMaxSamples of each, with
// the slot's hour of day (UTC), and predicts with their 90th percentiles: the hour's own when
// that hour has at least kMinHourSamples and differs from the whole day's by more than a fifth
// (a nightly batch that runs twice as long), else the whole day's.
//
//   WAITING   ready at max(slot + p90(ready), now), then + p90(queue) + p90(run)
//   READY     now + p90(queue) + p90(run)
//   RUNNING   max(started + p90(run), now)
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
  static constexpr std::size_t kMinHourSamples = 5;

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
  // The p90 (or p50) of `phase` for a slot at `hour`; negative when unknown.
  static double percentile(const History& h, Phase phase, int hour, bool p50 = false);

  mutable Mutex mutex_;
  mutable std::map<std::string, History, std::less<>> histories_ GUARDED_BY(mutex_);
  std::map<SlotId, Open> open_ GUARDED_BY(mutex_);
};

}  // namespace celos
