// Linking datasets once every workflow file is loaded (celos/workflow.h link_datasets): ids are
// resolved here, not in the files, so that a dataset may be declared in any file or a shared
// defaults file, and so that no file's evaluation depends on another's.
#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/workflow.h"

namespace celos {

const Workflow* WorkflowConfig::producer_of(std::string_view dataset) const {
  for (const auto& [_, w] : workflows) {
    for (const DatasetUse& out : w.outputs) {
      if (out.dataset == dataset) return &w;
    }
  }
  return nullptr;
}

std::vector<const Workflow*> WorkflowConfig::consumers_of(std::string_view dataset) const {
  std::vector<const Workflow*> out;
  for (const auto& [_, w] : workflows) {
    for (const DatasetUse& in : w.inputs) {
      if (in.dataset == dataset) {
        out.push_back(&w);
        break;
      }
    }
  }
  return out;
}

std::optional<ResolvedInput> WorkflowConfig::resolve_input(const Workflow& workflow,
                                                           const DatasetUse& use) const {
  auto ds = datasets.find(use.dataset);
  if (ds == datasets.end()) return std::nullopt;
  ResolvedInput input;
  input.dataset = ds->second;
  input.use = use;
  input.consumer = workflow.id;
  input.consumer_start_time = workflow.start_time;
  if (const Workflow* producer = producer_of(use.dataset)) {
    input.producer = producer->id;
    for (const DatasetUse& out : producer->outputs) {
      if (out.dataset == use.dataset) input.producer_offset = out.offset;
    }
  }
  return input;
}

namespace {

bool has_time_variables(std::string_view path) {
  for (const char* v : {"${year}", "${month}", "${day}", "${hour}", "${minute}", "${second}"}) {
    if (path.find(v) != std::string_view::npos) return true;
  }
  return false;
}

// The workflows in file order (file name, then line): "the later one" of a conflict.
std::vector<const Workflow*> in_file_order(const WorkflowConfig& config) {
  std::vector<const Workflow*> order;
  for (const auto& [_, w] : config.workflows) order.push_back(&w);
  std::sort(order.begin(), order.end(), [](const Workflow* a, const Workflow* b) {
    return std::tie(a->file, a->line, a->id) < std::tie(b->file, b->line, b->id);
  });
  return order;
}

// Two slots of one week that expand an output's path to the same instance would overwrite each
// other's data (and atomic outputs would remove the other's).
std::optional<std::string> output_path_problem(const WorkflowConfig& config, const Workflow& w,
                                               const Dataset& ds, const DatasetUse& out) {
  if (!has_time_variables(ds.path)) {
    return fmt::format(
        "output dataset \"{}\": its path {} has no time variables, so every slot "
        "would write the same instance",
        ds.id, ds.path);
  }
  const Time reference = std::max<Time>(w.start_time, Time(std::chrono::seconds(1704067200)));
  auto times = w.schedule->times(reference, reference + std::chrono::hours(24 * 7),
                                 config.schedule_context());
  if (!times) return std::nullopt;  // the schedule's own problem shows up when it is stepped
  std::map<std::string, Time> seen;
  for (Time t : *times) {
    const std::string path = ds.instance_path(t + std::chrono::seconds(out.offset));
    auto [it, inserted] = seen.emplace(path, t);
    if (!inserted) {
      return fmt::format(
          "output dataset \"{}\": slots {} and {} both write {} (the path {} does "
          "not tell the workflow's slots apart)",
          ds.id, format_time(it->second), format_time(t), path, ds.path);
    }
  }
  return std::nullopt;
}

class Linker {
 public:
  explicit Linker(WorkflowConfig& config) : config_(config) {}

  void declare(const std::vector<DatasetDeclaration>& declarations) {
    std::map<std::string, const DatasetDeclaration*> first;
    for (const DatasetDeclaration& d : declarations) {
      auto [it, inserted] = first.emplace(d.dataset.id, &d);
      if (inserted) {
        config_.datasets.emplace(d.dataset.id, d.dataset);
      } else if (!(it->second->dataset == d.dataset)) {
        error({d.file, d.line,
               fmt::format("dataset \"{}\" is declared differently in {} line {} (path, fs and "
                           "doneFlag must be the same)",
                           d.dataset.id, it->second->file, it->second->line)});
        conflicts_.emplace(d.file, d.dataset.id);
      }
    }
  }

  // Unknown ids, conflicting declarations, bad output paths, second producers.
  void check_uses() {
    std::map<std::string, const Workflow*> producers;
    for (const Workflow* w : in_file_order(config_)) {
      if (auto problem = use_problem(*w, producers)) {
        drop(*w, *problem);
        continue;
      }
      for (const DatasetUse& out : w->outputs) producers.emplace(out.dataset, w);
    }
    remove_dropped();
  }

  // A slot waiting for itself through datasets: drop the latest workflow of such a cycle.
  void check_cycles() {
    for (;;) {
      auto cycle = zero_cycle();
      if (cycle.empty()) return;
      const Workflow* last = *std::max_element(cycle.begin(), cycle.end(), [](auto* a, auto* b) {
        return std::tie(a->file, a->line, a->id) < std::tie(b->file, b->line, b->id);
      });
      std::vector<std::string> ids;
      for (const Workflow* w : cycle) ids.push_back(w->id);
      drop(*last, fmt::format("workflows {} wait for each other through datasets and their "
                              "offsets add up to 0 (a slot would wait for itself)",
                              fmt::join(ids, " -> ")));
      remove_dropped();
    }
  }

  void derive_triggers() {
    for (auto& [_, w] : config_.workflows) {
      if (w.trigger || w.inputs.empty()) continue;
      std::vector<TriggerPtr> parts;
      for (const DatasetUse& in : w.inputs) {
        parts.push_back(make_dataset_trigger(*config_.resolve_input(w, in)));
      }
      w.trigger = make_and_trigger(std::move(parts));
    }
  }

 private:
  std::optional<std::string> use_problem(const Workflow& w,
                                         const std::map<std::string, const Workflow*>& producers) {
    for (const auto* list : {&w.inputs, &w.outputs}) {
      for (const DatasetUse& use : *list) {
        if (!config_.datasets.count(use.dataset)) {
          return fmt::format(
              "workflow \"{}\": unknown dataset \"{}\" (declare it with "
              "celos.dataset)",
              w.id, use.dataset);
        }
        if (conflicts_.count({w.file, use.dataset})) {
          return fmt::format("workflow \"{}\": dataset \"{}\" is declared differently elsewhere",
                             w.id, use.dataset);
        }
      }
    }
    for (const DatasetUse& out : w.outputs) {
      if (auto p = producers.find(out.dataset); p != producers.end()) {
        return fmt::format(
            "workflow \"{}\": dataset \"{}\" is already an output of workflow "
            "\"{}\" ({}); a dataset has at most one producer",
            w.id, out.dataset, p->second->id, p->second->file);
      }
      const Dataset& ds = config_.datasets.at(out.dataset);
      if (auto problem = output_path_problem(config_, w, ds, out)) {
        return fmt::format("workflow \"{}\": {}", w.id, *problem);
      }
    }
    return std::nullopt;
  }

  // Edges consumer -> producer weighted by how far the consumer's slot looks ahead of the
  // producer's: slot S of C waits for slot S + (in offset - out offset) of P.
  struct Edge {
    const Workflow* to;
    std::int64_t delta;
  };

  std::vector<const Workflow*> zero_cycle() {
    std::map<const Workflow*, std::vector<Edge>> edges;
    for (const auto& [_, w] : config_.workflows) {
      if (w.trigger) continue;  // an explicit trigger alone decides
      for (const DatasetUse& in : w.inputs) {
        const Workflow* p = config_.producer_of(in.dataset);
        if (!p) continue;
        std::int64_t out_offset = 0;
        for (const DatasetUse& out : p->outputs) {
          if (out.dataset == in.dataset) out_offset = out.offset;
        }
        edges[&w].push_back({p, in.offset - out_offset});
      }
    }
    std::vector<const Workflow*> path;
    std::set<const Workflow*> on_path;
    int budget = 200000;  // simple cycles can be many; the graphs of real configs are small
    std::function<bool(const Workflow*, const Workflow*, std::int64_t)> walk =
        [&](const Workflow* start, const Workflow* at, std::int64_t sum) {
          if (--budget < 0) return false;
          for (const Edge& e : edges[at]) {
            if (e.to == start && sum + e.delta == 0) return true;
            if (on_path.count(e.to) || e.to < start) continue;  // each cycle from its least node
            path.push_back(e.to);
            on_path.insert(e.to);
            if (walk(start, e.to, sum + e.delta)) return true;
            on_path.erase(e.to);
            path.pop_back();
          }
          return false;
        };
    for (const auto& [from, _] : edges) {
      path = {from};
      on_path = {from};
      if (walk(from, from, 0)) return path;
    }
    if (budget < 0) spdlog::warn("datasets: cycle check stopped early (too many paths)");
    return {};
  }

  void error(LoadError e) {
    spdlog::warn("workflow file {} line {}: {}", e.file, e.line, e.message);
    config_.errors.push_back(std::move(e));
  }

  void drop(const Workflow& w, std::string message) {
    error({w.file, w.line, std::move(message)});
    dropped_.insert(w.id);
  }

  void remove_dropped() {
    for (const std::string& id : dropped_) config_.workflows.erase(id);
    dropped_.clear();
  }

  WorkflowConfig& config_;
  std::set<std::pair<std::string, std::string>> conflicts_;  // (file, dataset id)
  std::set<std::string> dropped_;
};

}  // namespace

void link_datasets(WorkflowConfig& config, const std::vector<DatasetDeclaration>& declarations) {
  Linker linker(config);
  linker.declare(declarations);
  linker.check_uses();
  linker.check_cycles();
  linker.derive_triggers();
}

}  // namespace celos
