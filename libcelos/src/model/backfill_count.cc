#include "model/backfill_count.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace celos::detail {
namespace {

bool glob_matches(std::string_view pattern, std::string_view text) {
  const auto star = pattern.find('*');
  if (star == std::string_view::npos) return pattern == text;
  const std::string_view head = pattern.substr(0, star);
  if (text.substr(0, head.size()) != head) return false;
  const std::string_view rest = pattern.substr(star + 1);
  for (std::size_t at = head.size(); at <= text.size(); ++at) {
    if (glob_matches(rest, text.substr(at))) return true;
  }
  return false;
}

std::string_view trimmed_count(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// How many of `times` (sorted) the stored window leaves to `reprocess`.
std::size_t matching(Reprocess reprocess, const std::vector<Time>& times,
                     const StateDatabase::Window& window) {
  auto scheduled = [&](Time t) { return std::binary_search(times.begin(), times.end(), t); };
  std::size_t n = reprocess == Reprocess::kFailed ? 0 : times.size();
  for (const auto& [t, status] : window.closed) {
    if (!scheduled(t)) continue;
    const bool match = reprocess_matches(reprocess, SlotState::of(SlotId{"", t}, status));
    if (reprocess == Reprocess::kFailed && match) ++n;
    if (reprocess != Reprocess::kFailed && !match) --n;
  }
  for (const SlotState& s : window.open) {
    if (scheduled(s.id.time) && !reprocess_matches(reprocess, s) &&
        reprocess != Reprocess::kFailed) {
      --n;
    }
  }
  return n;
}

}  // namespace

Result<std::vector<std::string>> match_workflows(const WorkflowConfig& config,
                                                 std::string_view text) {
  std::set<std::string> out;
  bool any = false;
  while (true) {
    const auto comma = text.find(',');
    const std::string_view name = trimmed_count(text.substr(0, comma));
    if (!name.empty()) {
      any = true;
      std::size_t found = 0;
      for (const auto& [id, _] : config.workflows) {
        if (!glob_matches(name, id)) continue;
        out.insert(id);
        ++found;
      }
      if (found == 0) {
        return fail(fmt::format("parameter workflows: {} \"{}\"",
                                name.find('*') == std::string_view::npos ? "unknown workflow"
                                                                         : "no workflow matches",
                                name),
                    ErrorCode::kInvalid);
      }
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (!any) return fail("parameter workflows: no workflow named", ErrorCode::kInvalid);
  return std::vector<std::string>(out.begin(), out.end());
}

std::pair<Time, Time> plan_bounds(const BackfillPlan& plan, const Workflow& wf) {
  return {std::max(plan.start, wf.start_time), plan.end};
}

Result<std::map<std::string, std::size_t>> count_backfill(const WorkflowConfig& config,
                                                          StateDatabase& db,
                                                          const BackfillPlan& plan,
                                                          std::size_t max_slots) {
  std::map<std::string, std::size_t> out;
  std::size_t seen = 0;
  const ScheduleContext context = config.schedule_context();
  for (const std::string& id : plan.workflows) {
    const Workflow& wf = *config.find(id);
    const auto [from, to] = plan_bounds(plan, wf);
    out[id] = 0;
    if (to <= from) continue;
    std::vector<Time> times;
    // Walked a month at a time so that an absurd range is refused before it is listed.
    for (Time at = from; at < to;) {
      const Time next = std::min<Time>(to, at + std::chrono::hours(24 * 31));
      auto chunk = wf.schedule->times(at, next, context);
      if (!chunk) return tl::unexpected(chunk.error());
      seen += chunk->size();
      if (seen > max_slots) {
        return fail(fmt::format("parameters start and end: the range holds more than {} slots "
                                "(--max-backfill-slots); split it",
                                max_slots),
                    ErrorCode::kInvalid);
      }
      times.insert(times.end(), chunk->begin(), chunk->end());
      at = next;
    }
    auto window = db.get_window(id, from, to);
    if (!window) return tl::unexpected(window.error());
    out[id] = matching(plan.reprocess, times, *window);
  }
  return out;
}

}  // namespace celos::detail
