#include "celos/dataset.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "celos/state_db.h"

namespace celos {

// ---- TriggerContext defaults: contexts that know no datasets -----------------------------

Result<SlotStatus> TriggerContext::slot_status(const std::string& workflow_id, Time time) {
  auto ok = slot_succeeded(workflow_id, time);
  if (!ok) return tl::unexpected(ok.error());
  return *ok ? SlotStatus::kSuccess : SlotStatus::kWaiting;
}

Result<std::vector<SlotState>> TriggerContext::stored_slots(const std::string& workflow_id, Time,
                                                            Time) {
  return fail(fmt::format("the slots of workflow \"{}\" cannot be read here", workflow_id));
}

Result<bool> TriggerContext::instance_announced(const std::string&, Time) { return false; }

Result<std::vector<Time>> TriggerContext::announced_instances(const std::string&, Time, Time) {
  return std::vector<Time>{};
}

// ---- StateDatabase defaults: backends that do not store announcements yet ---------------

Result<void> StateDatabase::announce_instance(std::string_view dataset, Time, Time) {
  return fail(
      fmt::format("this state database cannot store announcements of dataset \"{}\"", dataset));
}

Result<void> StateDatabase::announce_instances(const std::vector<Announcement>& announcements,
                                               Time now) {
  for (const Announcement& a : announcements) {
    if (auto done = announce_instance(a.dataset, a.time, now); !done) return done;
  }
  return {};
}

Result<std::vector<Time>> StateDatabase::announced_instances(std::string_view, Time, Time) {
  return std::vector<Time>{};
}

// ---- datasets ----------------------------------------------------------------------------

std::string Dataset::instance_path(Time t) const { return replace_time_variables(path, t); }

std::string Dataset::done_flag_path(Time t) const {
  std::string dir = instance_path(t);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "/" + done_flag;
}

std::optional<std::pair<Time, Time>> Dataset::path_period(Time t) const {
  const CivilTime c = to_civil(t);
  const auto has = [&](std::string_view v) { return path.find(v) != std::string::npos; };
  const auto span = [&](Time start, std::chrono::seconds length) {
    return std::make_pair(start, start + length);
  };
  if (has("${second}")) return span(floor_seconds(t), std::chrono::seconds(1));
  if (has("${minute}"))
    return span(make_time(c.year, c.month, c.day, c.hour, c.minute), std::chrono::minutes(1));
  if (has("${hour}")) return span(make_time(c.year, c.month, c.day, c.hour), std::chrono::hours(1));
  if (has("${day}")) return span(make_time(c.year, c.month, c.day), std::chrono::hours(24));
  if (has("${month}")) {
    const bool december = c.month == 12;
    return std::make_pair(make_time(c.year, c.month, 1),
                          make_time(december ? c.year + 1 : c.year, december ? 1 : c.month + 1, 1));
  }
  if (has("${year}")) return std::make_pair(make_time(c.year, 1, 1), make_time(c.year + 1, 1, 1));
  return std::nullopt;
}

std::string_view to_string(InputMode mode) { return mode == InputMode::kNew ? "new" : "latest"; }

std::string input_variable_name(std::string_view dataset_id) {
  return "inputs." + std::string(dataset_id);
}

std::string input_env_name(std::string_view dataset_id) {
  std::string name = "CELOS_INPUT_";
  for (char c : dataset_id) {
    const auto u = static_cast<unsigned char>(c);
    name += std::isalnum(u) != 0 && u < 0x80 ? static_cast<char>(std::toupper(u)) : '_';
  }
  return name;
}

JobInputs job_inputs(const SubmitContext& context, const std::string& job_dir) {
  JobInputs out{context, {}};
  for (const auto& [name, paths] : context.variables) {
    if (!name.starts_with("inputs.")) continue;
    const std::string id = name.substr(7);
    const std::string file = job_dir + "/" + name;
    std::string lines = paths;
    std::replace(lines.begin(), lines.end(), ',', '\n');
    if (!lines.empty()) lines += '\n';
    out.files.emplace_back(file, std::move(lines));
    out.context.variables[name + ".file"] = file;
    out.context.env[input_env_name(id) + "_FILE"] = file;
    if (paths.size() > kInlineInputBytes) {
      out.context.variables[name] = "@" + file;
      out.context.env[input_env_name(id)] = "@" + file;
    }
  }
  return out;
}

std::string replace_variables(std::string_view text,
                              const std::map<std::string, std::string>& variables) {
  if (variables.empty() || text.find("${") == std::string_view::npos) return std::string(text);
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto open = text.find("${", i);
    if (open == std::string_view::npos) break;
    const auto close = text.find('}', open + 2);
    if (close == std::string_view::npos) break;
    out.append(text.substr(i, open - i));
    auto it = variables.find(std::string(text.substr(open + 2, close - open - 2)));
    if (it != variables.end()) {
      out += it->second;
    } else {
      out.append(text.substr(open, close + 1 - open));
    }
    i = close + 1;
  }
  out.append(text.substr(i));
  return out;
}

// ---- presence ----------------------------------------------------------------------------

Result<InstancePresence> instance_presence(const ResolvedInput& input, Time instance,
                                           TriggerContext& context) {
  InstancePresence presence;
  const std::string& id = input.dataset.id;
  if (input.producer) {
    const Time slot = instance - std::chrono::seconds(input.producer_offset);
    auto status = context.slot_status(*input.producer, slot);
    if (!status) return tl::unexpected(status.error());
    presence.producer_status = *status;
    if (*status == SlotStatus::kSuccess) {
      presence.present = true;
      presence.why = fmt::format("slot {} of {} is SUCCESS", format_time(slot), *input.producer);
    }
  }
  auto announced = context.instance_announced(id, instance);
  if (!announced) return tl::unexpected(announced.error());
  presence.announced = *announced;
  if (!presence.present && *announced) {
    presence.present = true;
    presence.why = "announced";
  }
  if (!presence.present && !input.producer) {
    const std::string flag = input.dataset.done_flag_path(instance);
    auto exists = context.path_exists(input.dataset.fs, flag);
    if (!exists) return tl::unexpected(exists.error());
    presence.present = *exists;
    presence.why = fmt::format("done flag {} {}", flag, *exists ? "exists" : "does not exist");
  }
  if (!presence.present && input.producer) {
    presence.why = fmt::format("slot {} of {} is {}",
                               format_time(instance - std::chrono::seconds(input.producer_offset)),
                               *input.producer, to_string(*presence.producer_status));
  }
  return presence;
}

Result<std::vector<Time>> new_instances(const ResolvedInput& input, Time slot,
                                        TriggerContext& context, const std::vector<Time>& held) {
  const std::chrono::seconds offset(input.use.offset);
  const Time hi = slot + offset;
  const Time lo = std::max<Time>(input.consumer_start_time, hi - kNewDataWindow);
  if (hi < lo) return std::vector<Time>{};
  std::set<Time> present;
  if (input.producer) {
    const std::chrono::seconds shift(input.producer_offset);
    auto produced =
        context.stored_slots(*input.producer, lo - shift, hi - shift + std::chrono::seconds(1));
    if (!produced) return tl::unexpected(produced.error());
    for (const SlotState& s : *produced) {
      if (s.status == SlotStatus::kSuccess) present.insert(s.id.time + shift);
    }
  }
  auto announced = context.announced_instances(input.dataset.id, lo, hi + std::chrono::seconds(1));
  if (!announced) return tl::unexpected(announced.error());
  present.insert(announced->begin(), announced->end());
  if (!input.producer && !present.count(hi)) {
    auto exists = context.path_exists(input.dataset.fs, input.dataset.done_flag_path(hi));
    if (!exists) return tl::unexpected(exists.error());
    if (*exists) present.insert(hi);
  }
  // Slots of the consumer that may have taken one of them: S + offset - 7d <= I <= S + offset.
  auto mine = context.stored_slots(input.consumer, lo - offset,
                                   hi - offset + kNewDataWindow + std::chrono::seconds(1));
  if (!mine) return tl::unexpected(mine.error());
  for (const SlotState& s : *mine) {
    if (s.id.time == slot) continue;
    if (s.status != SlotStatus::kSuccess && s.status != SlotStatus::kRunning) continue;
    if (auto it = s.consumed.find(input.dataset.id); it != s.consumed.end()) {
      for (Time t : it->second) present.erase(t);
    }
  }
  for (Time t : held) present.erase(t);
  return std::vector<Time>(present.begin(), present.end());
}

// ---- triggers ----------------------------------------------------------------------------

namespace {

class DatasetTrigger final : public Trigger {
 public:
  explicit DatasetTrigger(ResolvedInput input) : input_(std::move(input)) {}

  Result<TriggerStatus> evaluate(Time slot, TriggerContext& context) const override {
    if (input_.use.mode == InputMode::kNew) return evaluate_new(slot, context);
    const Time instance = slot + std::chrono::seconds(input_.use.offset);
    auto presence = instance_presence(input_, instance, context);
    if (!presence) return tl::unexpected(presence.error());
    return TriggerStatus{
        "DatasetTrigger",
        presence->present,
        fmt::format("Dataset {} instance {} is {} ({})", input_.dataset.id, format_time(instance),
                    presence->present ? "present" : "not present", presence->why),
        {}};
  }

 private:
  Result<TriggerStatus> evaluate_new(Time slot, TriggerContext& context) const {
    auto fresh = new_instances(input_, slot, context);
    if (!fresh) return tl::unexpected(fresh.error());
    const bool ready = static_cast<int>(fresh->size()) >= input_.use.min_instances;
    return TriggerStatus{
        "DatasetTrigger",
        ready,
        fmt::format("Dataset {}: {} new instance{} up to {} ({} needed)", input_.dataset.id,
                    fresh->size(), fresh->size() == 1 ? "" : "s",
                    format_time(slot + std::chrono::seconds(input_.use.offset)),
                    input_.use.min_instances),
        {}};
  }

  ResolvedInput input_;
};

class StatusTrigger final : public Trigger {
 public:
  StatusTrigger(std::string workflow_id, std::vector<std::string> statuses)
      : workflow_id_(std::move(workflow_id)), statuses_(std::move(statuses)) {}

  Result<TriggerStatus> evaluate(Time slot, TriggerContext& context) const override {
    auto status = context.slot_status(workflow_id_, slot);
    if (!status) return tl::unexpected(status.error());
    const std::string name(to_string(*status));
    const bool ready = std::find(statuses_.begin(), statuses_.end(), name) != statuses_.end();
    return TriggerStatus{
        "StatusTrigger",
        ready,
        fmt::format("Slot {} of workflow {} is {} ({} one of {})", format_time(slot), workflow_id_,
                    name, ready ? "is" : "is not", fmt::join(statuses_, ", ")),
        {}};
  }

 private:
  std::string workflow_id_;
  std::vector<std::string> statuses_;
};

}  // namespace

TriggerPtr make_dataset_trigger(ResolvedInput input) {
  return std::make_shared<DatasetTrigger>(std::move(input));
}

TriggerPtr make_status_trigger(std::string workflow_id, std::vector<std::string> statuses) {
  return std::make_shared<StatusTrigger>(std::move(workflow_id), std::move(statuses));
}

}  // namespace celos
