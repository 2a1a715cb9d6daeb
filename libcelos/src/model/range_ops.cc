// Range reruns and kills (celos/range_ops.h). A member of Scheduler defined here, beside the
// single-slot operations of scheduler.cc, so that the step's file stays about the step.
//
// Everything is decided before anything is written: the slots, what each would become, and
// what is skipped and why. A dry run stops there. A real rerun then writes all rerun markers
// and all states as two grouped writes (10,000 slots are not 20,000 fsyncs); a real kill first
// kills the external jobs of RUNNING slots one by one (a failed kill skips that slot only).
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/scheduler.h"
#include "model/data_check_memory.h"

namespace celos {

Result<std::set<SlotStatus>> parse_status_list(std::string_view text) {
  std::set<SlotStatus> out;
  while (true) {
    const auto comma = text.find(',');
    std::string_view name = text.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    auto status = parse_slot_status(name);
    if (name.empty() || !status) {
      return fail(fmt::format("unknown status \"{}\" (use WAITING, READY, RUNNING, SUCCESS, "
                              "FAILURE, WAIT_TIMEOUT, KILLED)",
                              name),
                  ErrorCode::kInvalid);
    }
    out.insert(*status);
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

namespace {

// The schedule's times in [start, end), refusing more than kMaxRangeSlots. Walks the range in
// growing chunks so that a minutely schedule over ten years is refused without first building
// five million times.
Result<std::vector<Time>> range_times(const Workflow& wf, const WorkflowConfig& config, Time start,
                                      Time end) {
  std::vector<Time> out;
  std::chrono::milliseconds chunk = std::chrono::hours(24);
  for (Time from = start; from < end;) {
    const Time to = end - from > chunk ? from + chunk : end;
    auto times = wf.schedule->times(from, to, config.schedule_context());
    if (!times) return tl::unexpected(times.error());
    out.insert(out.end(), times->begin(), times->end());
    if (out.size() > kMaxRangeSlots) {
      return fail(fmt::format("the range holds more than {} slots of workflow \"{}\"; "
                              "split it",
                              kMaxRangeSlots, wf.id),
                  ErrorCode::kInvalid);
    }
    if (times->size() < 1000 && chunk < std::chrono::hours(24 * 366 * 64)) chunk *= 2;
    from = to;
  }
  return out;
}

// What `action` makes of `state`, or why it cannot.
Result<SlotState> next_state(RangeAction action, const SlotState& state, bool stored) {
  if (action == RangeAction::kKill) return state.killed();
  if (!stored) return state;  // nothing stored: WAITING with a marker (backfill)
  return state.rerun();
}

}  // namespace

Result<RangeResult> Scheduler::range(RangeAction action, const RangeRequest& request) {
  if (request.start > request.end) {
    return fail("parameters start and end: start must not be after end", ErrorCode::kInvalid);
  }
  auto config = this->config();
  const Workflow* wf = config->find(request.workflow);
  if (wf == nullptr) {
    return fail(fmt::format("unknown workflow \"{}\"", request.workflow), ErrorCode::kNotFound);
  }
  const Time start = std::max(request.start, wf->start_time);
  RangeResult result;
  result.dry_run = request.dry_run;
  if (request.end <= start) return result;
  auto times = range_times(*wf, *config, start, request.end);
  if (!times) return tl::unexpected(times.error());
  auto stored_list = db_.get_slots(wf->id, start, request.end);
  if (!stored_list) return tl::unexpected(stored_list.error());
  std::map<Time, SlotState> stored;
  for (SlotState& s : *stored_list) stored.emplace(s.id.time, std::move(s));

  std::vector<SlotChange> changes;
  for (Time t : *times) {
    auto it = stored.find(t);
    const bool is_stored = it != stored.end();
    const SlotState state = is_stored ? it->second : SlotState::waiting(SlotId{wf->id, t});
    if (request.statuses && !request.statuses->count(state.status)) continue;
    auto next = next_state(action, state, is_stored);
    if (!next) {
      result.skipped.push_back({t, state.status, next.error().message});
      continue;
    }
    changes.push_back({is_stored ? std::optional<SlotState>(state) : std::nullopt, *next,
                       request.now, request.by});
  }
  if (!request.dry_run && !changes.empty()) {
    auto done = action == RangeAction::kRerun ? commit_range_rerun(changes, request.now)
                                              : commit_range_kill(*wf, changes, result);
    if (!done) return tl::unexpected(done.error());
  }
  for (const SlotChange& c : changes) {
    result.slots.push_back(
        {c.to.id.time, c.from ? std::optional(c.from->status) : std::nullopt, c.to.status});
  }
  std::sort(result.skipped.begin(), result.skipped.end(),
            [](const RangeSkip& a, const RangeSkip& b) { return a.time < b.time; });
  return result;
}

Result<void> Scheduler::commit_range_rerun(const std::vector<SlotChange>& changes, Time now) {
  std::vector<SlotId> ids;
  std::vector<SlotState> states;
  for (const SlotChange& c : changes) {
    ids.push_back(c.to.id);
    states.push_back(c.to);
  }
  data_checks_->reset({ids.front().workflow});  // its data is checked at the next step
  if (auto marked = db_.mark_reruns(ids, now); !marked) return marked;
  if (auto written = db_.put_slots(states); !written) return written;
  spdlog::info("workflow {}: rerun of {} slots requested ({})", ids.front().workflow, ids.size(),
               changes.front().by);
  notify(changes);
  return {};
}

// Kills the external jobs first; a slot whose job could not be killed moves to `skipped` and is
// left as it was (SPEC §4: a failed kill changes nothing).
Result<void> Scheduler::commit_range_kill(const Workflow& wf, std::vector<SlotChange>& changes,
                                          RangeResult& result) {
  std::vector<SlotChange> killed;
  if (auto ok = guard_->confirm(); !ok) {  // a node that lost its lease kills nothing
    return fail("not killing: " + ok.error().message, ok.error().code);
  }
  for (SlotChange& c : changes) {
    if (c.from && c.from->status == SlotStatus::kRunning && c.from->external_id) {
      if (auto done = wf.service->kill(c.to.id, *c.from->external_id); !done) {
        result.skipped.push_back(
            {c.to.id.time, c.from->status,
             fmt::format("killing {} failed: {}", *c.from->external_id, done.error().message)});
        continue;
      }
    }
    killed.push_back(std::move(c));
  }
  changes = std::move(killed);
  if (changes.empty()) return {};
  if (auto written = put_changes(db_, outbox_, changes); !written) return written;
  spdlog::info("workflow {}: {} slots killed ({})", wf.id, changes.size(), changes.front().by);
  notify(changes);
  return {};
}

}  // namespace celos
