// The API's dataset reads (celos/dataset_reads.h): instances in a range, the announcement
// check, a slot's lineage. Values out; web/datasets_api.cc renders them.
#include "celos/dataset_reads.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "model/dataset_step.h"

namespace celos {
namespace {

// ---- instances ---------------------------------------------------------------------------

// The slot times of `w` in [start, end) (never before its startTime), shifted by `shift`.
void add_shifted_times(const WorkflowConfig& config, const Workflow& w, std::int64_t shift,
                       Time start, Time end, std::set<Time>& out) {
  const std::chrono::seconds s(shift);
  const Time from = std::max<Time>(start - s, w.start_time);
  if (end - s <= from) return;
  auto times = w.schedule->times(from, end - s, config.schedule_context());
  if (!times) return;
  for (Time t : *times) out.insert(t + s);
}

// The instance times worth listing: the producer's slots, announcements (one ranged read,
// kept by `context` for the presence questions that follow), and (no producer) the times the
// consumers look at.
Result<std::set<Time>> instance_times(const WorkflowConfig& config, const Dataset& ds,
                                      TriggerContext& context, Time start, Time end) {
  std::set<Time> times;
  if (const Workflow* p = config.producer_of(ds.id)) {
    for (const DatasetUse& out : p->outputs) {
      if (out.dataset == ds.id) add_shifted_times(config, *p, out.offset, start, end, times);
    }
  } else {
    for (const Workflow* c : config.consumers_of(ds.id)) {
      for (const DatasetUse& in : c->inputs) {
        if (in.dataset == ds.id) add_shifted_times(config, *c, in.offset, start, end, times);
      }
    }
  }
  auto announced = context.announced_instances(ds.id, start, end);
  if (!announced) return tl::unexpected(announced.error());
  times.insert(announced->begin(), announced->end());
  return times;
}

ResolvedInput as_input(const WorkflowConfig& config, const Dataset& ds) {
  ResolvedInput input;
  input.dataset = ds;
  input.use.dataset = ds.id;
  if (const Workflow* p = config.producer_of(ds.id)) {
    input.producer = p->id;
    for (const DatasetUse& out : p->outputs) {
      if (out.dataset == ds.id) input.producer_offset = out.offset;
    }
  }
  return input;
}

// ---- lineage -----------------------------------------------------------------------------

SlotRef slot_ref(TriggerContext& context, const std::string& workflow, Time t) {
  auto status = context.slot_status(workflow, t);
  return {workflow, t, status ? std::optional<SlotStatus>(*status) : std::nullopt};
}

// The instances of input `in` that slot `slot` reads: mode latest the one at its offset, mode
// new the ones its stored record consumed, or else the ones it would consume now.
Result<std::vector<Time>> read_instances(const ResolvedInput& input, const DatasetUse& in,
                                         Time slot, const std::vector<SlotState>& stored,
                                         TriggerContext& context) {
  if (in.mode != InputMode::kNew) return std::vector<Time>{slot + std::chrono::seconds(in.offset)};
  const auto* consumed = stored.empty() ? nullptr : &stored.front().consumed;
  if (consumed && consumed->count(in.dataset)) return consumed->at(in.dataset);
  return new_instances(input, slot, context);
}

Result<std::vector<LineageInput>> lineage_inputs(const WorkflowConfig& config, const Workflow& w,
                                                 Time slot, TriggerContext& context) {
  std::vector<LineageInput> out;
  auto stored = context.stored_slots(w.id, slot, slot + std::chrono::seconds(1));
  if (!stored) return tl::unexpected(stored.error());
  for (const DatasetUse& in : w.inputs) {
    auto input = config.resolve_input(w, in);
    if (!input) continue;
    auto instances = read_instances(*input, in, slot, *stored, context);
    if (!instances) return tl::unexpected(instances.error());
    for (Time t : *instances) {
      auto presence = instance_presence(*input, t, context);
      if (!presence) return tl::unexpected(presence.error());
      LineageInput entry{in.dataset, t, input->dataset.instance_path(t), presence->present, {}};
      if (input->producer) {
        entry.producer =
            slot_ref(context, *input->producer, t - std::chrono::seconds(input->producer_offset));
      }
      out.push_back(std::move(entry));
    }
  }
  return out;
}

// The slots that read instance `t` of `dataset`.
Result<std::vector<SlotRef>> consumers_of_instance(const WorkflowConfig& config,
                                                   const std::string& dataset, Time t,
                                                   TriggerContext& context) {
  std::vector<SlotRef> out;
  for (const Workflow* c : config.consumers_of(dataset)) {
    for (const DatasetUse& in : c->inputs) {
      if (in.dataset != dataset) continue;
      const Time slot = t - std::chrono::seconds(in.offset);
      if (in.mode == InputMode::kLatest) {
        auto is_slot = is_slot_time(*c->schedule, slot, config.schedule_context());
        if (is_slot && *is_slot && slot >= c->start_time)
          out.push_back(slot_ref(context, c->id, slot));
        continue;
      }
      auto slots =
          context.stored_slots(c->id, slot, slot + kNewDataWindow + std::chrono::seconds(1));
      if (!slots) return tl::unexpected(slots.error());
      for (const SlotState& s : *slots) {
        auto it = s.consumed.find(dataset);
        if (it != s.consumed.end() && std::count(it->second.begin(), it->second.end(), t)) {
          out.push_back({c->id, s.id.time, s.status});
        }
      }
    }
  }
  return out;
}

Result<std::vector<LineageOutput>> lineage_outputs(const WorkflowConfig& config, const Workflow& w,
                                                   Time slot, TriggerContext& context,
                                                   FileSystemResolver& file_systems) {
  std::vector<LineageOutput> out;
  for (const DatasetUse& o : w.outputs) {
    auto ds = config.datasets.find(o.dataset);
    if (ds == config.datasets.end()) continue;
    const Time t = output_instance(o, slot);
    auto state = inspect_output(ds->second, t, file_systems);
    if (!state) return tl::unexpected(state.error());
    auto consumers = consumers_of_instance(config, o.dataset, t, context);
    if (!consumers) return tl::unexpected(consumers.error());
    const bool would_remove = w.atomic_outputs && state->exists && !state->complete;
    out.push_back({std::move(*state), would_remove, std::move(*consumers)});
  }
  return out;
}

}  // namespace

Result<InstancePage> dataset_instances(const WorkflowConfig& config, const Dataset& ds, Time start,
                                       Time end, std::size_t limit, Time now, StateDatabase& db,
                                       FileSystemResolver& file_systems) {
  auto context = make_dataset_read_context(now, db, file_systems);
  auto times = instance_times(config, ds, *context, start, end);
  if (!times) return tl::unexpected(times.error());
  const ResolvedInput input = as_input(config, ds);
  InstancePage page;
  for (auto t = times->rbegin(); t != times->rend(); ++t) {
    if (page.instances.size() == limit) break;
    auto presence = instance_presence(input, *t, *context);
    if (!presence) return tl::unexpected(presence.error());
    page.instances.push_back({*t, ds.instance_path(*t), presence->present, presence->announced});
  }
  page.truncated = times->size() > limit;
  return page;
}

Result<void> check_announcement(const Dataset& ds, Time time, StateDatabase& db,
                                const std::vector<Time>& accepted) {
  const std::string path = ds.instance_path(time);
  const auto period = ds.path_period(time);
  if (!period) {
    return fail(fmt::format("dataset \"{}\": its path {} has no time variables, so its announced "
                            "instances could not be told apart (consumers find it by its done "
                            "flag instead)",
                            ds.id, ds.path),
                ErrorCode::kInvalid);
  }
  auto announced = db.announced_instances(ds.id, period->first, period->second);
  if (!announced) return tl::unexpected(announced.error());
  announced->insert(announced->end(), accepted.begin(), accepted.end());
  for (Time other : *announced) {
    if (other != time && ds.instance_path(other) == path) {
      return fail(fmt::format("dataset \"{}\": instance {} has the path {} of the announced "
                              "instance {} (the path {} does not tell them apart); announce {} "
                              "or add finer time variables to the path",
                              ds.id, format_time(time), path, format_time(other), ds.path,
                              format_time(other)),
                  ErrorCode::kInvalid);
    }
  }
  return {};
}

Result<SlotLineage> slot_lineage(const WorkflowConfig& config, const SlotId& slot, Time now,
                                 StateDatabase& db, FileSystemResolver& file_systems) {
  const Workflow* w = config.find(slot.workflow);
  if (!w) return fail(fmt::format("unknown workflow \"{}\"", slot.workflow), ErrorCode::kNotFound);
  auto is_slot = is_slot_time(*w->schedule, slot.time, config.schedule_context());
  if (!is_slot || !*is_slot || slot.time < w->start_time) {
    return fail(
        fmt::format("{} is not a slot of workflow \"{}\"", format_time(slot.time), slot.workflow),
        ErrorCode::kNotFound);
  }
  auto context = make_dataset_read_context(now, db, file_systems);
  auto inputs = lineage_inputs(config, *w, slot.time, *context);
  if (!inputs) return tl::unexpected(inputs.error());
  auto outputs = lineage_outputs(config, *w, slot.time, *context, file_systems);
  if (!outputs) return tl::unexpected(outputs.error());
  return SlotLineage{std::move(*inputs), std::move(*outputs)};
}

}  // namespace celos
