// Expectations of a scenario: a slot's state at a time, a count of slots in a state, no
// FAILURE. Each is checked after the last step at or before its time.
#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "sim/report.h"

namespace celos::sim {
namespace {

const char* compare_word(Compare c) {
  return c == Compare::kEqual ? "exactly" : c == Compare::kAtLeast ? "at least" : "at most";
}

bool holds(Compare c, std::int64_t actual, std::int64_t wanted) {
  return c == Compare::kEqual     ? actual == wanted
         : c == Compare::kAtLeast ? actual >= wanted
                                  : actual <= wanted;
}

}  // namespace

Expectations::Expectations(World& world) : world_(world) {
  for (const ExpectSpec& e : world.scenario.expect) results_.push_back(ExpectResult{&e});
  for (std::size_t i = 0; i < results_.size(); ++i) by_time_.push_back(i);
  std::stable_sort(by_time_.begin(), by_time_.end(), [&](std::size_t a, std::size_t b) {
    const auto at = [&](std::size_t i) { return results_[i].spec->at.value_or(Time::max()); };
    return at(a) < at(b);
  });
}

void Expectations::check_before(Time now) {
  while (next_ < by_time_.size()) {
    ExpectResult& r = results_[by_time_[next_]];
    if (!r.spec->at || *r.spec->at >= now) return;
    check(r, *r.spec->at);
    ++next_;
  }
}

void Expectations::check_rest(Time last, std::optional<Time> until) {
  for (; next_ < by_time_.size(); ++next_) {
    ExpectResult& r = results_[by_time_[next_]];
    // Without a time: at the scenario's end, which --until may not reach.
    const Time when = r.spec->at.value_or(world_.scenario.end);
    if (until && when > *until) {
      r.message = fmt::format("not checked: {} is after --until", format_time(when));
      continue;
    }
    check(r, std::min(when, last));
  }
}

bool Expectations::all_passed() const {
  return std::all_of(results_.begin(), results_.end(),
                     [](const ExpectResult& r) { return r.passed || !r.checked; });
}

void Expectations::check(ExpectResult& r, Time as_of) {
  r.checked = true;
  switch (r.spec->kind) {
    case ExpectKind::kState:
      return check_state(r);
    case ExpectKind::kCount:
      return check_count(r, as_of);
    case ExpectKind::kNoFailure:
      return check_no_failure(r, as_of);
  }
}

void Expectations::check_state(ExpectResult& r) {
  const ExpectSpec& e = *r.spec;
  const SlotId id{e.workflow, e.slot};
  r.history_of = id;
  auto slots = world_.scheduler.workflow_slots(e.workflow, e.slot, e.slot + Seconds(1));
  if (!slots || slots->empty() || slots->front().id.time != e.slot) {
    r.message = fmt::format("{} is not a slot: {}", to_string(id),
                            slots ? "not a time of its schedule" : slots.error().message);
    return;
  }
  const SlotStatus actual = slots->front().status;
  r.passed = actual == e.state;
  r.message = fmt::format("slot {}: expected {}, actual {}", to_string(id), to_string(e.state),
                          to_string(actual));
}

void Expectations::check_count(ExpectResult& r, Time as_of) {
  const ExpectSpec& e = *r.spec;
  const Time from = e.from.value_or(world_.scenario.start);
  const Time to = e.to.value_or(std::min(as_of, world_.scenario.end));
  std::int64_t count = 0;
  int workflows = 0;
  for (const auto& [id, wf] : world_.scheduler.config()->workflows) {
    if (!glob_match(e.workflow, id)) continue;
    ++workflows;
    auto slots = world_.scheduler.workflow_slots(id, from, to);
    if (!slots) continue;
    for (const SlotState& s : *slots) {
      if (s.status != e.state) continue;
      ++count;
      if (!r.history_of) r.history_of = s.id;
    }
  }
  r.passed = holds(e.compare, count, e.count);
  r.message = fmt::format("{} {} slots of {} ({} workflows) in [{}, {}): expected {} {}, actual {}",
                          e.count, to_string(e.state), e.workflow, workflows, format_time(from),
                          format_time(to), compare_word(e.compare), e.count, count);
  if (r.passed) r.history_of.reset();
}

void Expectations::check_no_failure(ExpectResult& r, Time as_of) {
  const ExpectSpec& e = *r.spec;
  std::int64_t failures = 0;
  for (const auto& [at, id] : world_.timeline.failures()) {
    if (at > as_of || !glob_match(e.workflow, id.workflow)) continue;
    if (failures++ == 0) r.history_of = id;
  }
  r.passed = failures == 0;
  r.message = r.passed ? fmt::format("no FAILURE in {}", e.workflow)
                       : fmt::format("no FAILURE in {}: expected none, actual {} (the first: {})",
                                     e.workflow, failures, to_string(*r.history_of));
}

std::vector<std::string> slot_lines(const std::string& timeline_file, const SlotId& slot) {
  const std::string key = fmt::format("\"workflow\":{},\"slot\":\"{}\"", json_quote(slot.workflow),
                                      format_time(slot.time));
  std::vector<std::string> out;
  std::ifstream in(timeline_file);
  for (std::string line; std::getline(in, line);) {
    if (line.find(key) != std::string::npos) out.push_back(line);
  }
  return out;
}

}  // namespace celos::sim
