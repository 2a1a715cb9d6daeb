// The 30-day replay of issue 27 (deadline_bench.cc): synthetic workflows whose inputs arrive
// late and whose jobs run slow now and then, stepped every 5 minutes at explicit times through
// the real scheduler, its deadlines and its history predictor.
#pragma once

#include <cstdint>
#include <string>

namespace celos::bench {

struct ReplayOptions {
  int workflows = 100;
  int days = 30;  // counted; one more day before them warms the predictor up
  int step_minutes = 5;
  // Also step a workflow when one of its jobs ends, as celos-server does with --autoSchedule
  // (issue 28: a command job's exit record, Oozie's notification); without, a job's end is seen
  // by the next periodic step only.
  bool job_events = false;
  std::uint64_t seed = 27;
  // When set, one line per slot flagged AT_RISK: workflow, slot time, its status then, MISSED or
  // MET, minutes from the flag to the deadline, from the flag to the input's arrival (negative:
  // it had come), the job's planned run, the deadline after the slot, and the flag's reason.
  std::string flags_file;
};

struct ReplayFigures {
  long slots = 0;                // slots with a deadline in the counted days
  long missed = 0;               // of which MISSED
  long missed_flagged = 0;       // MISSED slots flagged AT_RISK at least 15 min before the deadline
  long missed_flagged_late = 0;  // MISSED slots first flagged less than 15 min before it
  long missed_never_flagged = 0;
  long flagged = 0;               // slots flagged AT_RISK
  long flagged_on_time = 0;       // of which MET
  long flagged_on_time_late = 0;  // of which first flagged less than 15 min before the deadline
  // The same two counts by the slot's status when first flagged: WAITING, READY, RUNNING.
  long flagged_by_status[4] = {0, 0, 0, 0};  // [3]: never (AT_RISK only while not final)
  long on_time_by_status[4] = {0, 0, 0, 0};
  // Misses not flagged in time, by the slot's status when judged MISSED: WAITING, READY, RUNNING,
  // other.
  long unflagged_by_status[4] = {0, 0, 0, 0};
  long steps = 0;        // periodic steps
  long event_steps = 0;  // partial steps at jobs' ends
  double step_ms_median = 0, step_ms_worst = 0;
};

ReplayFigures run_replay(const ReplayOptions& options);

}  // namespace celos::bench
