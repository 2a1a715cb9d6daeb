// `celos plan`: what a new version of a workflow set changes over the next days. Both versions
// are loaded with the real JavaScript loader (from scratch copies: loading evaluates nothing
// that touches the world, but command services must not find the real jobs directory); slot
// times come from the schedules, triggers are compared by their status trees at one slot time
// in a world where nothing exists yet.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>

#include <fmt/format.h>

#include "celos/simulate.h"
#include "celos/workflow_loader.h"
#include "sim/timeline.h"
#include "sim/world.h"

namespace celos::sim {
namespace {

struct Moved {
  std::string workflow;
  Time from{}, to{};
};

struct Plan {
  Time start{}, end{};
  std::vector<SlotId> added = {}, removed = {};
  std::vector<Moved> moved = {};
  std::vector<std::string> added_workflows = {}, removed_workflows = {};
  std::vector<std::pair<std::string, std::vector<std::string>>> changed = {};  // workflow, what
};

// A world where no path exists and no slot has run: the trigger trees say what they wait for.
class EmptyWorld final : public TriggerContext {
 public:
  explicit EmptyWorld(Time now) : now_(now) {}
  Time now() const override { return now_; }
  Result<bool> path_exists(const std::string&, const std::string&) override { return false; }
  Result<bool> slot_succeeded(const std::string&, Time) override { return false; }

 private:
  Time now_;
};

std::string plan_tree_text(const Result<TriggerStatus>& tree) {
  if (!tree) return "error: " + tree.error().message;
  std::string out = tree->type + ": " + tree->description;
  for (const TriggerStatus& sub : tree->sub_statuses) out += " [" + plan_tree_text(sub) + "]";
  return out;
}

std::string uses_text(const std::vector<DatasetUse>& uses) {
  std::string out;
  for (const DatasetUse& u : uses) {
    out += fmt::format("{}{}+{}s/{}", out.empty() ? "" : ",", u.dataset, u.offset,
                       u.mode == InputMode::kNew ? "new" : "latest");
  }
  return out;
}

std::vector<Time> slot_times(const WorkflowConfig& config, const Workflow& wf, const Plan& plan) {
  auto times =
      wf.schedule->times(std::max(plan.start, wf.start_time), plan.end, config.schedule_context());
  return times ? *times : std::vector<Time>{};
}

// What differs between two definitions of one workflow, besides its slot times.
std::vector<std::string> changes_of(const Workflow& a, const Workflow& b, Time at) {
  std::vector<std::string> what;
  const auto differs = [&](const char* name, const std::string& x, const std::string& y) {
    if (x != y) what.push_back(fmt::format("{}: {} -> {}", name, x, y));
  };
  differs("schedule", a.schedule->describe(), b.schedule->describe());
  differs("startTime", format_time(a.start_time), format_time(b.start_time));
  differs("externalService", a.service->describe(), b.service->describe());
  EmptyWorld world(at);
  differs("trigger", plan_tree_text(a.trigger->evaluate(at, world)),
          plan_tree_text(b.trigger->evaluate(at, world)));
  differs("inputs", uses_text(a.inputs), uses_text(b.inputs));
  differs("outputs", uses_text(a.outputs), uses_text(b.outputs));
  return what;
}

void compare_slots(const std::string& id, std::vector<Time> old_times, std::vector<Time> new_times,
                   Plan& plan) {
  std::vector<Time> gone, come;
  std::set_difference(old_times.begin(), old_times.end(), new_times.begin(), new_times.end(),
                      std::back_inserter(gone));
  std::set_difference(new_times.begin(), new_times.end(), old_times.begin(), old_times.end(),
                      std::back_inserter(come));
  // A slot that went and one that came, in order, are one slot moved (a schedule shifted).
  const std::size_t pairs = std::min(gone.size(), come.size());
  for (std::size_t i = 0; i < pairs; ++i) plan.moved.push_back({id, gone[i], come[i]});
  for (std::size_t i = pairs; i < gone.size(); ++i) plan.removed.push_back({id, gone[i]});
  for (std::size_t i = pairs; i < come.size(); ++i) plan.added.push_back({id, come[i]});
}

Plan make_plan(const WorkflowConfig& from, const WorkflowConfig& to, Time start, int days) {
  Plan plan{start, start + std::chrono::hours(24) * days};
  for (const auto& [id, wf] : to.workflows) {
    const Workflow* before = from.find(id);
    if (before == nullptr) {
      plan.added_workflows.push_back(id);
      for (Time t : slot_times(to, wf, plan)) plan.added.push_back({id, t});
      continue;
    }
    auto what = changes_of(*before, wf, start);
    if (!what.empty()) plan.changed.emplace_back(id, std::move(what));
    compare_slots(id, slot_times(from, *before, plan), slot_times(to, wf, plan), plan);
  }
  for (const auto& [id, wf] : from.workflows) {
    if (to.find(id) != nullptr) continue;
    plan.removed_workflows.push_back(id);
    for (Time t : slot_times(from, wf, plan)) plan.removed.push_back({id, t});
  }
  return plan;
}

std::string slot_json(const SlotId& s) {
  return fmt::format(R"({{"workflow":{},"slot":"{}"}})", json_quote(s.workflow),
                     format_time(s.time));
}

void write_plan_json(const Plan& p, std::ostream& out) {
  const auto list = [](const auto& items, auto render) {
    std::string s;
    for (const auto& item : items) s += (s.empty() ? "" : ",") + render(item);
    return "[" + s + "]";
  };
  const auto quoted = [](const std::string& s) { return json_quote(s); };
  out << fmt::format(R"({{"start":"{}","end":"{}","added":{},"removed":{},"moved":{},)",
                     format_time(p.start), format_time(p.end), list(p.added, slot_json),
                     list(p.removed, slot_json), list(p.moved, [](const Moved& m) {
                       return fmt::format(R"({{"workflow":{},"from":"{}","to":"{}"}})",
                                          json_quote(m.workflow), format_time(m.from),
                                          format_time(m.to));
                     }));
  out << fmt::format(R"("addedWorkflows":{},"removedWorkflows":{},"changed":{}}})",
                     list(p.added_workflows, quoted), list(p.removed_workflows, quoted),
                     list(p.changed,
                          [&](const auto& c) {
                            return fmt::format(R"({{"workflow":{},"changes":{}}})",
                                               json_quote(c.first), list(c.second, quoted));
                          }))
      << '\n';
}

// Per workflow: how many slots were added, removed, moved, and the first few of each.
void write_plan_text(const Plan& p, std::ostream& out) {
  out << fmt::format(
      "plan for {} .. {}: {} slots added, {} removed, {} moved; {} workflows added, {} removed, "
      "{} changed\n",
      format_time(p.start), format_time(p.end), p.added.size(), p.removed.size(), p.moved.size(),
      p.added_workflows.size(), p.removed_workflows.size(), p.changed.size());
  for (const std::string& id : p.added_workflows) out << "added workflow " << id << '\n';
  for (const std::string& id : p.removed_workflows) out << "removed workflow " << id << '\n';
  for (const auto& [id, what] : p.changed) {
    out << "changed " << id << '\n';
    for (const std::string& w : what) out << "  " << w << '\n';
  }
  constexpr std::size_t kShown = 3;
  std::map<std::string, std::vector<std::string>> lines;
  for (const SlotId& s : p.added) lines[s.workflow].push_back("added " + format_time(s.time));
  for (const SlotId& s : p.removed) lines[s.workflow].push_back("removed " + format_time(s.time));
  for (const Moved& m : p.moved) {
    lines[m.workflow].push_back(
        fmt::format("moved {} -> {}", format_time(m.from), format_time(m.to)));
  }
  for (const auto& [id, items] : lines) {
    out << fmt::format("{}: {} slots changed\n", id, items.size());
    for (std::size_t i = 0; i < std::min(kShown, items.size()); ++i)
      out << "  " << items[i] << '\n';
    if (items.size() > kShown) out << fmt::format("  ... and {} more\n", items.size() - kShown);
  }
}

// Loads the version whose files are in `copy` (workflows/, defaults/).
WorkflowConfigPtr load_copy(const std::string& copy, const std::string& name, std::ostream& err) {
  WorkflowLoaderOptions options;
  options.workflows_dir = copy + "/workflows";
  options.defaults_dir = copy + "/defaults";
  options.db_dir = copy + "/db";
  auto config = make_js_workflow_source(options)->load();
  for (const LoadError& e : config->errors) {
    err << fmt::format("{}: workflow file {}:{}: {}\n", name, e.file, e.line, e.message);
  }
  return config;
}

Result<WorkflowConfigPtr> load_version(const std::string& dir, const std::string& copy,
                                       std::ostream& err) {
  if (auto copied = copy_tree(dir + "/workflows", copy + "/workflows", {}); !copied) {
    return fail(fmt::format("{}: no workflows/ directory ({})", dir, copied.error().message),
                ErrorCode::kInvalid);
  }
  (void)copy_tree(dir + "/defaults", copy + "/defaults", {});  // defaults are optional
  return load_copy(copy, dir, err);
}

WorkflowConfigPtr load_files(const WorkflowFiles& files, const std::string& copy,
                             const std::string& name, std::ostream& err) {
  for (const auto& [part, named] :
       {std::pair{"workflows", &files.workflows}, std::pair{"defaults", &files.defaults}}) {
    std::filesystem::create_directories(copy + "/" + part);
    for (const auto& [file, text] : *named) {
      std::ofstream(copy + "/" + part + "/" + file, std::ios::binary) << text;
    }
  }
  return load_copy(copy, name, err);
}

bool write_plan(const WorkflowConfig& from, const WorkflowConfig& to, const PlanOptions& options,
                std::ostream& out) {
  const Plan p = make_plan(from, to, floor_seconds(options.now), options.days);
  if (options.json) {
    write_plan_json(p, out);
  } else {
    write_plan_text(p, out);
  }
  return !(p.added.empty() && p.removed.empty() && p.moved.empty() && p.changed.empty());
}

}  // namespace
}  // namespace celos::sim

namespace celos {

Result<bool> plan(const PlanOptions& options, std::ostream& out, std::ostream& err) {
  using namespace celos::sim;
  ScratchDir scratch;
  auto from = load_version(options.from_dir, scratch.path() + "/from", err);
  if (!from) return tl::unexpected(from.error());
  auto to = load_version(options.to_dir, scratch.path() + "/to", err);
  if (!to) return tl::unexpected(to.error());
  return write_plan(**from, **to, options, out);
}

Result<bool> plan_files(const WorkflowFiles& from, const WorkflowFiles& to,
                        const PlanOptions& options, std::ostream& out, std::ostream& err) {
  using namespace celos::sim;
  ScratchDir scratch;
  const auto before = load_files(from, scratch.path() + "/from", "deployed", err);
  const auto after = load_files(to, scratch.path() + "/to", "to deploy", err);
  return write_plan(*before, *after, options, out);
}

}  // namespace celos
