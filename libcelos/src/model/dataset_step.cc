#include "model/dataset_step.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

namespace celos {

// ---- lookups -----------------------------------------------------------------------------

// Served from one range read of the workflow's slots (below), not one file read per slot: a
// thousand consumers of hourly data ask for 168 slots each.
Result<SlotStatus> DatasetLookups::slot_status(const std::string& workflow_id, Time time) {
  auto slots = stored_slots(workflow_id, time - kNewDataWindow - std::chrono::hours(24),
                            time + std::chrono::hours(24));
  if (!slots) return tl::unexpected(slots.error());
  for (const SlotState& s : *slots) {
    if (s.id.time == time) return s.status;
  }
  return SlotStatus::kWaiting;
}

// One read per workflow and step in the common case: a wider range replaces the cached one.
Result<std::vector<SlotState>> DatasetLookups::stored_slots(const std::string& workflow_id,
                                                            Time start, Time end) {
  auto it = slots_.find(workflow_id);
  if (it == slots_.end() || start < it->second.start || end > it->second.end) {
    Loaded loaded;
    loaded.start = it == slots_.end() ? start : std::min(start, it->second.start);
    loaded.end = it == slots_.end() ? end : std::max(end, it->second.end);
    // The next question is usually about the next slot: read ahead instead of once per slot.
    loaded.end = std::max(loaded.end, end + kNewDataWindow + std::chrono::hours(48));
    auto read = db_.get_slots(workflow_id, loaded.start, loaded.end);
    if (!read) return tl::unexpected(read.error());
    loaded.slots = std::move(*read);
    it = slots_.insert_or_assign(workflow_id, std::move(loaded)).first;
  }
  std::vector<SlotState> out;
  for (const SlotState& s : it->second.slots) {
    if (s.id.time >= start && s.id.time < end) out.push_back(s);
  }
  return out;
}

Result<bool> DatasetLookups::instance_announced(const std::string& dataset_id, Time time) {
  auto it = announced_.find(dataset_id);
  if (it == announced_.end() || time < it->second.start || time >= it->second.end) {
    // Read ahead: the next question is usually about a neighbouring slot.
    auto loaded = load_announced(dataset_id, time - kNewDataWindow - std::chrono::hours(24),
                                 time + kNewDataWindow + std::chrono::hours(48));
    if (!loaded) return tl::unexpected(loaded.error());
    it = *loaded;
  }
  return it->second.times.count(time) > 0;
}

// Served from the cache when it covers the range: a listing or a lineage read asks for the
// range once and then about each instance in it (one read, not one per instance).
Result<std::vector<Time>> DatasetLookups::announced_instances(const std::string& dataset_id,
                                                              Time start, Time end) {
  if (end <= start) return std::vector<Time>{};
  auto it = announced_.find(dataset_id);
  if (it == announced_.end() || start < it->second.start || end > it->second.end) {
    auto loaded = load_announced(dataset_id, start, end);
    if (!loaded) return tl::unexpected(loaded.error());
    it = *loaded;
  }
  const auto& times = it->second.times;
  return std::vector<Time>(times.lower_bound(start), times.lower_bound(end));
}

// One ranged read of [start, end) joined with the range loaded before (a wider range replaces
// the cached one).
Result<std::map<std::string, DatasetLookups::Announced>::iterator> DatasetLookups::load_announced(
    const std::string& dataset_id, Time start, Time end) {
  Announced loaded{start, end, {}};
  if (auto it = announced_.find(dataset_id); it != announced_.end()) {
    loaded.start = std::min(loaded.start, it->second.start);
    loaded.end = std::max(loaded.end, it->second.end);
  }
  auto read = db_.announced_instances(dataset_id, loaded.start, loaded.end);
  if (!read) return tl::unexpected(read.error());
  loaded.times.insert(read->begin(), read->end());
  return announced_.insert_or_assign(dataset_id, std::move(loaded)).first;
}

// ---- helpers -----------------------------------------------------------------------------

namespace {

// What the two contexts below answer alike: the moment, files through the resolver, and
// success as a slot status.
class ResolvingContext : public TriggerContext {
 public:
  ResolvingContext(Time now, FileSystemResolver& file_systems)
      : now_(now), file_systems_(file_systems) {}
  Time now() const override { return now_; }
  Result<bool> path_exists(const std::string& fs_uri, const std::string& path) override {
    auto fs = file_systems_.resolve(fs_uri);
    if (!fs) return tl::unexpected(fs.error());
    return (*fs)->exists(path);
  }
  Result<bool> slot_succeeded(const std::string& workflow_id, Time time) override {
    auto status = slot_status(workflow_id, time);
    if (!status) return tl::unexpected(status.error());
    return *status == SlotStatus::kSuccess;
  }

 private:
  Time now_;
  FileSystemResolver& file_systems_;
};

// An uncached context for submit time: the picks of this step must see the latest records.
class FreshContext final : public ResolvingContext {
 public:
  FreshContext(Time now, StateDatabase& db, FileSystemResolver& file_systems)
      : ResolvingContext(now, file_systems), db_(db) {}
  Result<SlotStatus> slot_status(const std::string& workflow_id, Time time) override {
    auto state = db_.get_slot(SlotId{workflow_id, time});
    if (!state) return tl::unexpected(state.error());
    return state->has_value() ? (*state)->status : SlotStatus::kWaiting;
  }
  Result<std::vector<SlotState>> stored_slots(const std::string& workflow_id, Time start,
                                              Time end) override {
    return db_.get_slots(workflow_id, start, end);
  }
  Result<bool> instance_announced(const std::string& dataset_id, Time time) override {
    auto found = db_.announced_instances(dataset_id, time, time + std::chrono::seconds(1));
    if (!found) return tl::unexpected(found.error());
    return !found->empty();
  }
  Result<std::vector<Time>> announced_instances(const std::string& dataset_id, Time start,
                                                Time end) override {
    return db_.announced_instances(dataset_id, start, end);
  }

 private:
  StateDatabase& db_;
};

// Only services whose jobs cannot write a done flag themselves get one from celos
// (ServiceTraits::writes_done_flags).
bool writes_done_flag(const ExternalService& service) { return service.traits().writes_done_flags; }

std::string join_paths(const Dataset& ds, const std::vector<Time>& times) {
  std::vector<std::string> paths;
  for (Time t : times) paths.push_back(ds.instance_path(t));
  return fmt::format("{}", fmt::join(paths, ","));
}

// The API's reads: one request is one moment, so its dataset answers come from DatasetLookups'
// ranged reads (a listing of 10,000 announced instances is one read, not 10,000).
class ReadContext final : public ResolvingContext {
 public:
  ReadContext(Time now, StateDatabase& db, FileSystemResolver& file_systems)
      : ResolvingContext(now, file_systems), lookups_(db) {}
  Result<SlotStatus> slot_status(const std::string& workflow_id, Time time) override {
    return lookups_.slot_status(workflow_id, time);
  }
  Result<std::vector<SlotState>> stored_slots(const std::string& workflow_id, Time start,
                                              Time end) override {
    return lookups_.stored_slots(workflow_id, start, end);
  }
  Result<bool> instance_announced(const std::string& dataset_id, Time time) override {
    return lookups_.instance_announced(dataset_id, time);
  }
  Result<std::vector<Time>> announced_instances(const std::string& dataset_id, Time start,
                                                Time end) override {
    return lookups_.announced_instances(dataset_id, start, end);
  }

 private:
  DatasetLookups lookups_;
};

}  // namespace

std::unique_ptr<TriggerContext> make_dataset_read_context(Time now, StateDatabase& db,
                                                          FileSystemResolver& file_systems) {
  return std::make_unique<ReadContext>(now, db, file_systems);
}

Time output_instance(const DatasetUse& out, Time slot) {
  return slot + std::chrono::seconds(out.offset);
}

Result<void> check_removable(const std::string& path) {
  auto refuse = [&](std::string_view why) {
    return fail(fmt::format("refusing to remove \"{}\": {}", path, why), ErrorCode::kInvalid);
  };
  if (path.empty() || path[0] != '/') return refuse("not an absolute path");
  std::size_t components = 0;
  std::size_t i = 1;
  while (i <= path.size()) {
    auto next = path.find('/', i);
    if (next == std::string::npos) next = path.size();
    const std::string_view part(path.data() + i, next - i);
    if (part == "." || part == "..") return refuse("contains . or ..");
    if (part.empty() && next != path.size()) return refuse("contains an empty component");
    if (!part.empty()) ++components;
    i = next + 1;
  }
  if (components < 2) return refuse("too close to the root");
  return {};
}

Result<OutputInstanceState> inspect_output(const Dataset& ds, Time instance,
                                           FileSystemResolver& file_systems) {
  OutputInstanceState state{ds.id, instance, ds.instance_path(instance), false, false};
  auto fs = file_systems.resolve(ds.fs);
  if (!fs) return tl::unexpected(fs.error());
  auto exists = (*fs)->exists(state.path);
  if (!exists) return tl::unexpected(exists.error());
  state.exists = *exists;
  if (state.exists) {
    auto complete = (*fs)->exists(ds.done_flag_path(instance));
    if (!complete) return tl::unexpected(complete.error());
    state.complete = *complete;
  }
  return state;
}

Result<void> DatasetStep::confirm(const std::string& what) {
  auto confirmed = guard_.confirm();
  if (!confirmed)
    return fail(fmt::format("not {}: {}", what, confirmed.error().message), confirmed.error().code);
  return {};
}

// Removes the instances of `slot`'s outputs that exist without their done flag.
Result<void> DatasetStep::remove_incomplete_outputs(const WorkflowConfig& config,
                                                    const Workflow& workflow, Time slot,
                                                    FileSystemResolver& file_systems,
                                                    std::string_view why) {
  bool confirmed = false;
  for (const DatasetUse& out : workflow.outputs) {
    auto ds = config.datasets.find(out.dataset);
    if (ds == config.datasets.end()) continue;
    auto state = inspect_output(ds->second, output_instance(out, slot), file_systems);
    if (!state) return tl::unexpected(state.error());
    if (!state->exists || state->complete) continue;
    if (auto ok = check_removable(state->path); !ok) return ok;
    auto fs = file_systems.resolve(ds->second.fs);
    if (!fs) return tl::unexpected(fs.error());
    if (!confirmed) {  // right before the first removal: still the leader?
      if (auto ok = confirm("removing " + state->path); !ok) return ok;
      confirmed = true;
    }
    if (auto removed = (*fs)->remove(state->path); !removed) return removed;
    spdlog::warn("slot {}: removed incomplete output {} of dataset {} ({})",
                 to_string(SlotId{workflow.id, slot}), state->path, out.dataset, why);
  }
  return {};
}

namespace {

// The new instances a pick of mode-new input `input` takes now: those not consumed by the
// workflow's SUCCESS or RUNNING slots nor held by `earlier` picks of this step.
Result<std::vector<Time>> take_new_instances(const ResolvedInput& input, const SlotState& pick,
                                             const std::vector<SlotState>& earlier,
                                             TriggerContext& fresh) {
  std::vector<Time> held;
  for (const SlotState& e : earlier) {
    if (auto it = e.consumed.find(input.use.dataset); it != e.consumed.end()) {
      held.insert(held.end(), it->second.begin(), it->second.end());
    }
  }
  return new_instances(input, pick.id.time, fresh, held);
}

}  // namespace

// ---- hooks -------------------------------------------------------------------------------

Result<SubmitDecision> DatasetStep::before_submit(const Workflow& workflow, SlotState& pick,
                                                  const std::vector<SlotState>& earlier) {
  SubmitDecision decision;
  SubmitContext& context = decision.context.emplace();
  FreshContext fresh(now_, db_, file_systems_);
  pick.consumed.clear();
  for (const DatasetUse& in : workflow.inputs) {
    auto input = config_.resolve_input(workflow, in);
    if (!input) continue;
    std::vector<Time> instances;
    if (in.mode == InputMode::kNew) {
      auto taken = take_new_instances(*input, pick, earlier, fresh);
      if (!taken) return tl::unexpected(taken.error());
      if (static_cast<int>(taken->size()) < in.min_instances) {
        pick.consumed.clear();
        return SubmitDecision{std::nullopt,
                              fmt::format("{} new instance{} of dataset {} at submit time, {} "
                                          "needed",
                                          taken->size(), taken->size() == 1 ? "" : "s", in.dataset,
                                          in.min_instances)};
      }
      instances = std::move(*taken);
      pick.consumed[in.dataset] = instances;
    } else {
      instances.push_back(pick.id.time + std::chrono::seconds(in.offset));
    }
    const std::string paths = join_paths(input->dataset, instances);
    context.variables[input_variable_name(in.dataset)] = paths;
    context.env[input_env_name(in.dataset)] = paths;
  }
  if (workflow.atomic_outputs) {
    auto cleaned = remove_incomplete_outputs(config_, workflow, pick.id.time, file_systems_,
                                             "leftover of an earlier attempt, before submitting");
    if (!cleaned) return tl::unexpected(cleaned.error());
  }
  return decision;
}

Result<void> DatasetStep::before_success(const Workflow& workflow, const SlotState& slot) {
  if (!workflow.atomic_outputs || !writes_done_flag(*workflow.service)) return {};
  bool confirmed = false;
  for (const DatasetUse& out : workflow.outputs) {
    auto ds = config_.datasets.find(out.dataset);
    if (ds == config_.datasets.end()) continue;
    const Time instance = output_instance(out, slot.id.time);
    auto fs = file_systems_.resolve(ds->second.fs);
    if (!fs) return tl::unexpected(fs.error());
    const std::string flag = ds->second.done_flag_path(instance);
    auto exists = (*fs)->exists(flag);
    if (!exists) return tl::unexpected(exists.error());
    if (*exists) continue;
    if (!confirmed) {  // right before the first flag: still the leader?
      if (auto ok = confirm("writing the done flag " + flag); !ok) return ok;
      confirmed = true;
    }
    if (auto written = (*fs)->write(flag, ""); !written) {
      return fail(fmt::format("cannot write the done flag {}: {}", flag, written.error().message));
    }
    spdlog::info("slot {}: wrote done flag {}", to_string(slot.id), flag);
  }
  return {};
}

void DatasetStep::after_failure(const Workflow& workflow, const SlotState& slot) {
  if (!workflow.atomic_outputs || workflow.outputs.empty()) return;
  auto removed =
      remove_incomplete_outputs(config_, workflow, slot.id.time, file_systems_,
                                fmt::format("the slot became {}", to_string(slot.status)));
  if (!removed) {
    spdlog::error("slot {}: removing incomplete outputs failed: {}", to_string(slot.id),
                  removed.error().message);
  }
}

Result<void> DatasetStep::before_rerun(const Workflow& workflow, const SlotState& from) {
  if (!workflow.atomic_outputs || from.status != SlotStatus::kSuccess) return {};
  if (!workflow.outputs.empty()) {
    if (auto ok = confirm("removing the done flags of " + to_string(from.id)); !ok) return ok;
  }
  for (const DatasetUse& out : workflow.outputs) {
    auto ds = config_.datasets.find(out.dataset);
    if (ds == config_.datasets.end()) continue;
    const std::string flag = ds->second.done_flag_path(output_instance(out, from.id.time));
    if (auto ok = check_removable(flag); !ok) return ok;
    auto fs = file_systems_.resolve(ds->second.fs);
    if (!fs) return tl::unexpected(fs.error());
    if (auto removed = (*fs)->remove(flag); !removed) return removed;
    spdlog::info("slot {}: rerun: removed done flag {}", to_string(from.id), flag);
  }
  return {};
}

}  // namespace celos
