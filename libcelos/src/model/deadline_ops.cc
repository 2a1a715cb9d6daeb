// The Scheduler's deadline operations (celos/scheduler.h, celos/deadline.h): moving one slot's
// deadline, and the reads behind GET /api/v1/deadlines and /trigger-status.
#include <algorithm>
#include <tuple>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/scheduler.h"

namespace celos {
namespace {

// How far before `start` slots are looked for whose deadline may fall in [start, end): what
// the rule adds to a slot time, and at least two days for deadlines moved by operators.
std::chrono::milliseconds lookback(const Workflow& wf) {
  std::chrono::milliseconds span = std::chrono::hours(48);
  if (wf.deadline && wf.deadline->after) {
    span = std::max<std::chrono::milliseconds>(span, *wf.deadline->after);
  } else if (wf.deadline) {
    span =
        std::max<std::chrono::milliseconds>(span, std::chrono::days(wf.deadline->day_offset + 1));
  }
  return span;
}

std::optional<DeadlineView> view_of(const Workflow& wf, const SlotState& s, Time now,
                                    const DeadlinePredictor* predictor) {
  const std::optional<Time> deadline = effective_deadline(wf, s);
  if (!deadline) return std::nullopt;
  DeadlineForecast forecast;
  if (predictor && !is_final(s.status)) forecast = predictor->predict(wf, s, now);
  auto state = deadline_state_at(s, *deadline, now, forecast);
  if (!state) return std::nullopt;
  DeadlineView v{s.id, *deadline, *state, forecast.finish, forecast.reason};
  if (is_final(s.status)) v.predicted_finish.reset();
  if (*state == DeadlineState::kMissed) {
    v.reason =
        is_final(s.status) && s.status != SlotStatus::kSuccess
            ? fmt::format("the slot ended {}", to_string(s.status))
            : fmt::format("not SUCCESS at the deadline (the slot is {})", to_string(s.status));
  } else if (*state == DeadlineState::kMet) {
    v.reason = "SUCCESS before the deadline";
  } else if (v.reason.empty()) {
    v.reason = "no history to predict from yet";
  }
  return v;
}

}  // namespace

Result<SlotState> Scheduler::set_deadline(const std::string& workflow, Time slot_time,
                                          Time deadline, Time now, const std::string& by) {
  auto config = this->config();
  auto wf = find_slot(*config, workflow, slot_time);
  if (!wf) return tl::unexpected(wf.error());
  const SlotId id{workflow, slot_time};
  auto stored = db_.get_slot(id);
  if (!stored) return tl::unexpected(stored.error());
  SlotState next = stored->value_or(SlotState::waiting(id));
  next.deadline = deadline;
  next.deadline_state.reset();  // judged again against the new deadline
  if (auto written = db_.put_slots({next}); !written) return tl::unexpected(written.error());
  spdlog::info("slot {}: deadline moved to {} by {}", to_string(id), format_time(deadline), by);
  notify({SlotChange{*stored, next, now, by}});
  return next;
}

Result<std::vector<DeadlineView>> Scheduler::deadlines(Time start, Time end, Time now,
                                                       const std::set<DeadlineState>& states) {
  if (end <= start) return fail("end must be after start", ErrorCode::kInvalid);
  if (end - start > std::chrono::days(7)) {
    return fail("at most 7 days of deadlines per call", ErrorCode::kInvalid);
  }
  auto config = this->config();
  std::vector<DeadlineView> out;
  for (const auto& [id, wf] : config->workflows) {
    const Time from = std::max<Time>(wf.start_time, start - lookback(wf));
    auto times = wf.schedule->times(from, end, config->schedule_context());
    if (!times) return tl::unexpected(times.error());
    auto stored = db_.get_slots(id, from, end);
    if (!stored) return tl::unexpected(stored.error());
    auto s = stored->begin();
    for (Time t : *times) {
      while (s != stored->end() && s->id.time < t) ++s;
      const SlotState slot =
          s != stored->end() && s->id.time == t ? *s : SlotState::waiting(SlotId{id, t});
      auto v = view_of(wf, slot, now, predictor_);
      if (!v || v->deadline < start || v->deadline >= end) continue;
      if (!states.empty() && !states.count(v->state)) continue;
      out.push_back(std::move(*v));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const DeadlineView& a, const DeadlineView& b) {
    return std::tie(a.deadline, a.slot) < std::tie(b.deadline, b.slot);
  });
  return out;
}

Result<std::optional<DeadlineView>> Scheduler::deadline_view(const std::string& workflow,
                                                             Time slot_time, Time now) {
  auto config = this->config();
  auto wf = find_slot(*config, workflow, slot_time);
  if (!wf) return tl::unexpected(wf.error());
  const SlotId id{workflow, slot_time};
  auto stored = db_.get_slot(id);
  if (!stored) return tl::unexpected(stored.error());
  return view_of(**wf, stored->value_or(SlotState::waiting(id)), now, predictor_);
}

}  // namespace celos
