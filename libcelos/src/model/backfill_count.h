// What creating a backfill plan and admitting its slots share (model/backfill.cc,
// model/backfill_pump.cc): the workflows a pattern names, the schedule's times in a range, and
// the count of a plan's slots. Internal to model/.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "celos/backfill.h"

namespace celos::detail {

// "a,b*,c": the ids and the workflows each glob (`*` = any run of characters) matches, sorted
// and unique. kInvalid naming `workflows` and the id for an unknown id or a glob matching none.
[[nodiscard]] Result<std::vector<std::string>> match_workflows(const WorkflowConfig& config,
                                                               std::string_view text);

// The slots of `plan.workflows` in [plan.start, plan.end) (never before a workflow's
// startTime) that `plan.reprocess` runs, by workflow (0 included). More than `max_slots` slots
// in the range (before the filter) is kInvalid naming start and end, found before all of them
// were listed.
[[nodiscard]] Result<std::map<std::string, std::size_t>> count_backfill(
    const WorkflowConfig& config, StateDatabase& db, const BackfillPlan& plan,
    std::size_t max_slots);

// The range of `wf` a plan covers: [max(plan.start, startTime), plan.end).
std::pair<Time, Time> plan_bounds(const BackfillPlan& plan, const Workflow& wf);

}  // namespace celos::detail
