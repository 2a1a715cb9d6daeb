// The simulation loop: at each step time, the world's scripted events that are due (data
// arriving, operators acting) happen, the expectations whose time has passed are checked, and
// the real Scheduler steps at that time. Outages need no event: the simulated services ask the
// clock.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/simulate.h"
#include "sim/report.h"

namespace celos::sim {
namespace {

constexpr const char* kOperator = "api:simulated-operator";

// One data entry's instances, by the time they appear.
struct Feed {
  const DataSpec* spec = nullptr;
  const Dataset* dataset = nullptr;
  std::vector<std::pair<Time, Time>> arrivals = {};  // (appears at, instance), ascending
  std::size_t next = 0;
};

Result<std::vector<Feed>> make_feeds(const Scenario& s, const WorkflowConfig& config) {
  std::vector<Feed> feeds;
  for (const DataSpec& d : s.data) {
    Feed feed{&d};
    if (!d.dataset.empty()) {
      auto it = config.datasets.find(d.dataset);
      if (it == config.datasets.end()) {
        return fail(fmt::format("{}: field {}.dataset: no dataset \"{}\" is declared", s.file,
                                d.field, d.dataset),
                    ErrorCode::kInvalid);
      }
      feed.dataset = &it->second;
    }
    for (Time t : d.times) {
      if (d.never.count(t)) continue;
      const auto late = d.late.find(t);
      feed.arrivals.emplace_back(t + (late == d.late.end() ? d.delay : late->second), t);
    }
    std::sort(feed.arrivals.begin(), feed.arrivals.end());
    feeds.push_back(std::move(feed));
  }
  return feeds;
}

class Simulation {
 public:
  Simulation(const Scenario& s, const SimulateOptions& o, const std::string& scratch,
             std::ostream* timeline)
      : options_(o), world_(s, scratch, timeline), expectations_(world_) {}

  Result<void> prepare(std::ostream& err) {
    const WorkflowConfigPtr config = world_.scheduler.reload();
    for (const LoadError& e : config->errors) {
      err << fmt::format("workflow file {}:{}: {}\n", e.file, e.line, e.message);
    }
    auto feeds = make_feeds(world_.scenario, *config);
    if (!feeds) return tl::unexpected(feeds.error());
    feeds_ = std::move(*feeds);
    for (const OperatorSpec& o : world_.scenario.operators) operators_.push_back(&o);
    std::stable_sort(operators_.begin(), operators_.end(),
                     [](const OperatorSpec* a, const OperatorSpec* b) { return a->at < b->at; });
    for (const auto& [id, _] : config->workflows) {
      if (options_.only.empty() || glob_match(options_.only, id)) only_.insert(id);
    }
    return {};
  }

  void run() {
    const Scenario& s = world_.scenario;
    facts_.first = s.start;
    for (Time now = s.start; now < s.end; now += s.step) {
      if (options_.until && now > *options_.until) break;
      world_.clock.set_wall(now);
      arrive(now);
      act(now);
      expectations_.check_before(now);
      world_.scheduler.step(now, options_.only.empty() ? std::nullopt : std::optional(only_));
      facts_.last = now;
      ++facts_.steps;
    }
    expectations_.check_rest(facts_.last, options_.until);
  }

  World& world() { return world_; }
  const RunFacts& facts() const { return facts_; }
  const Expectations& expectations() const { return expectations_; }

 private:
  void arrive(Time now) {
    for (Feed& feed : feeds_) {
      for (; feed.next < feed.arrivals.size() && feed.arrivals[feed.next].first <= now;
           ++feed.next) {
        appear(feed, feed.arrivals[feed.next].second, now);
      }
    }
  }

  void appear(const Feed& feed, Time instance, Time now) {
    Result<void> done;
    if (feed.dataset == nullptr) {
      done =
          world_.file_systems.store().write(replace_time_variables(feed.spec->path, instance), "");
    } else if (feed.spec->announce) {
      done = world_.db->announce_instance(feed.dataset->id, instance, now);
    } else {
      done = world_.file_systems.store().write(feed.dataset->done_flag_path(instance), "");
    }
    if (!done) note(feed.spec->field, done.error().message);
  }

  void act(Time now) {
    for (; next_operator_ < operators_.size() && operators_[next_operator_]->at <= now;
         ++next_operator_) {
      const OperatorSpec& o = *operators_[next_operator_];
      Result<void> done = apply(o);
      if (!done) note(o.field, done.error().message);
    }
    world_.timeline.flush();
  }

  Result<void> apply(const OperatorSpec& o) {
    Scheduler& scheduler = world_.scheduler;
    switch (o.action) {
      case OperatorAction::kRerun:
        if (auto r = scheduler.rerun(o.workflow, o.slot, o.at, kOperator); !r) {
          return tl::unexpected(r.error());
        }
        return {};
      case OperatorAction::kKill:
        if (auto r = scheduler.kill(o.workflow, o.slot, o.at, kOperator); !r) {
          return tl::unexpected(r.error());
        }
        return {};
      case OperatorAction::kPause:
      case OperatorAction::kResume:
        return scheduler.pause(o.workflow, o.action == OperatorAction::kPause);
      case OperatorAction::kMaintenance: {
        Maintenance m{o.mode, o.reason.empty() ? std::nullopt : std::optional(o.reason), o.at};
        return world_.db->set_maintenance(m);
      }
    }
    return {};
  }

  void note(const std::string& field, const std::string& message) {
    facts_.notes.push_back(fmt::format("{}: {}", field, message));
  }

  const SimulateOptions& options_;
  World world_;
  Expectations expectations_;
  RunFacts facts_;
  std::vector<Feed> feeds_;
  std::vector<const OperatorSpec*> operators_;
  std::size_t next_operator_ = 0;
  std::set<std::string> only_;
};

void print_failures(const Expectations& expectations, const std::string& timeline_file,
                    std::ostream& err) {
  for (const ExpectResult& r : expectations.results()) {
    if (!r.checked || r.passed) continue;
    err << fmt::format("expectation {} failed: {}\n", r.spec->field, r.message);
    if (!r.history_of) continue;
    const auto lines = slot_lines(timeline_file, *r.history_of);
    err << fmt::format("  history of {} ({} changes):\n", to_string(*r.history_of), lines.size());
    for (const std::string& line : lines) err << "    " << line << '\n';
  }
}

// Logs of the step (a line per slot change, a warning per step error) would drown the summary,
// which counts the errors: errors of celos itself only.
class QuietLogs {
 public:
  QuietLogs() : level_(spdlog::get_level()) { spdlog::set_level(spdlog::level::err); }
  ~QuietLogs() { spdlog::set_level(level_); }

 private:
  spdlog::level::level_enum level_;
};

}  // namespace

}  // namespace celos::sim

namespace celos {

Result<bool> simulate(const SimulateOptions& options, std::ostream& out, std::ostream& err) {
  using namespace celos::sim;
  auto scenario = load_scenario(options.scenario);
  if (!scenario) return tl::unexpected(scenario.error());
  ScratchDir scratch;
  for (const auto& [from, to] : {std::pair{scenario->workflows_dir, "/workflows"},
                                 std::pair{scenario->defaults_dir, "/defaults"}}) {
    if (from.empty()) continue;
    if (auto copied = copy_tree(from, scratch.path() + to, scenario->substitute); !copied) {
      return fail(fmt::format("{}: {}", scenario->file, copied.error().message),
                  ErrorCode::kInvalid);
    }
  }
  const bool to_out = options.timeline == "-";
  const std::string timeline_file =
      options.timeline.empty() || to_out ? scratch.path() + "/timeline.jsonl" : options.timeline;
  std::ofstream timeline(timeline_file, std::ios::binary | std::ios::trunc);
  if (!timeline) return fail("cannot write the timeline to " + timeline_file);
  QuietLogs quiet;
  Simulation simulation(*scenario, options, scratch.path(), &timeline);
  if (auto ready = simulation.prepare(err); !ready) return tl::unexpected(ready.error());
  simulation.run();
  timeline.close();
  if (to_out) out << std::ifstream(timeline_file, std::ios::binary).rdbuf();
  write_summary(simulation.world(), simulation.facts(), simulation.expectations(), options, out);
  print_failures(simulation.expectations(), timeline_file, err);
  return simulation.expectations().all_passed();
}

}  // namespace celos
