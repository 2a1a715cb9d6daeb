// Setting up a simulated world: a scratch directory for the copied workflow files, the JS loader
// on them, and the services that stand in for the real ones.
#include "sim/world.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "celos/executor.h"
#include "celos/mutex.h"
#include "celos/workflow_loader.h"

namespace celos::sim {
namespace {

namespace fs = std::filesystem;

constexpr unsigned kMaxThreads = 4;

std::string replace_all(std::string text, const std::map<std::string, std::string>& substitute) {
  for (const auto& [from, to] : substitute) {
    if (from.empty()) continue;
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

// A schedule whose times over the simulated range (and the week before it, which the first
// steps look at) are computed once: every step asks each workflow for a week of slot times, and
// evaluating a cron expression 168 times per workflow and step cost more than the rest of the
// step. Schedules are pure functions of time, so the answers are the same; queries outside the
// range go to the schedule itself.
class PrecomputedSchedule final : public Schedule {
 public:
  PrecomputedSchedule(std::shared_ptr<const Schedule> inner, Time from, Time to)
      : inner_(std::move(inner)), from_(from), to_(to) {}

  Result<std::vector<Time>> times(Time start, Time end,
                                  const ScheduleContext& context) const override {
    if (start < from_ || end > to_) return inner_->times(start, end, context);
    const std::vector<Time>* all = cached(context);
    if (all == nullptr) return inner_->times(start, end, context);
    return std::vector<Time>(std::lower_bound(all->begin(), all->end(), start),
                             std::lower_bound(all->begin(), all->end(), end));
  }
  std::string describe() const override { return inner_->describe(); }

 private:
  // The times of [from_, to_), computed at the first call (a dependent schedule needs the
  // context); nullptr when the schedule fails there (its errors are then the inner's).
  const std::vector<Time>* cached(const ScheduleContext& context) const {
    MutexLock lock(mutex_);
    if (!computed_) {
      computed_ = true;
      if (auto all = inner_->times(from_, to_, context))
        times_ = std::move(*all);
      else
        failed_ = true;
    }
    return failed_ ? nullptr : &times_;
  }

  const std::shared_ptr<const Schedule> inner_;
  const Time from_, to_;
  mutable Mutex mutex_;
  mutable bool computed_ GUARDED_BY(mutex_) = false;
  mutable bool failed_ GUARDED_BY(mutex_) = false;
  mutable std::vector<Time> times_ GUARDED_BY(mutex_);
};

class SimWorkflowSource final : public WorkflowSource {
 public:
  SimWorkflowSource(std::unique_ptr<WorkflowSource> js, const Scenario& scenario,
                    const Clock& clock, const Outages& outages)
      : js_(std::move(js)), scenario_(scenario), clock_(clock), outages_(outages) {}

  // The files never change during a simulation: they are read once (a thousand workflows'
  // files checked at every step would cost more than the step).
  WorkflowConfigPtr load() override {
    if (simulated_) return simulated_;
    WorkflowConfigPtr loaded = js_->load();
    if (loaded == loaded_) return simulated_;
    auto config = std::make_shared<WorkflowConfig>(*loaded);
    const Time from = scenario_.start - kSlidingWindow - std::chrono::hours(24);
    const Time to = scenario_.end + std::chrono::hours(24);
    for (auto& [id, wf] : config->workflows) {
      wf.service = service_of(id, wf.service);
      wf.schedule = std::make_shared<PrecomputedSchedule>(wf.schedule, from, to);
    }
    loaded_ = loaded;
    simulated_ = config;
    return simulated_;
  }
  void clear_cache() override {
    js_->clear_cache();
    simulated_.reset();
  }

 private:
  ExternalServicePtr service_of(const std::string& id, const ExternalServicePtr& real) {
    auto it = services_.find(id);
    if (it != services_.end()) return it->second;
    static const JobSpec kDefault{};
    const JobSpec* job = &kDefault;
    for (const JobSpec& j : scenario_.jobs) {
      if (glob_match(j.workflow, id)) {
        job = &j;
        break;
      }
    }
    return services_[id] = make_sim_service(id, real, *job, clock_, outages_);
  }

  std::unique_ptr<WorkflowSource> js_;
  const Scenario& scenario_;
  const Clock& clock_;
  const Outages& outages_;
  WorkflowConfigPtr loaded_, simulated_;
  std::map<std::string, ExternalServicePtr> services_;
};

WorkflowLoaderOptions loader_options(const std::string& scratch) {
  WorkflowLoaderOptions options;
  options.workflows_dir = scratch + "/workflows";
  options.defaults_dir = scratch + "/defaults";
  options.db_dir = scratch + "/db";
  options.jobs_dir = scratch + "/jobs";
  return options;
}

}  // namespace

ScratchDir::ScratchDir() {
  std::string pattern = (fs::temp_directory_path() / "celos-simulate-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot make a temporary directory under " +
                             fs::temp_directory_path().string());
  }
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

Result<void> copy_tree(const std::string& from, const std::string& to,
                       const std::map<std::string, std::string>& substitute) {
  std::error_code ec;
  if (!fs::is_directory(from, ec)) {
    return fail(fmt::format("{} is not a directory", from), ErrorCode::kInvalid);
  }
  fs::create_directories(to, ec);
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const fs::path target = fs::path(to) / fs::relative(it->path(), from);
    fs::create_directories(target.parent_path(), ec);
    std::ifstream in(it->path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::ofstream(target, std::ios::binary) << replace_all(text.str(), substitute);
  }
  if (ec) return fail(fmt::format("copying {}: {}", from, ec.message()), ErrorCode::kInvalid);
  return {};
}

std::unique_ptr<WorkflowSource> make_sim_workflow_source(std::unique_ptr<WorkflowSource> js,
                                                         const Scenario& scenario,
                                                         const Clock& clock,
                                                         const Outages& outages) {
  return std::make_unique<SimWorkflowSource>(std::move(js), scenario, clock, outages);
}

World::World(const Scenario& s, const std::string& scratch, std::ostream* timeline_out)
    : scenario(s),
      clock(s.start),
      outages(s.outages, clock),
      file_systems(outages),
      db(make_memory_state_database()),
      source(make_sim_workflow_source(make_js_workflow_source(loader_options(scratch)), s, clock,
                                      outages)),
      executor(make_thread_pool_executor(
          int(std::clamp(std::thread::hardware_concurrency(), 1U, kMaxThreads)))),
      scheduler(*source, *db, file_systems),
      timeline(timeline_out) {
  scheduler.set_executor(*executor);
  scheduler.add_listener(timeline);
}

}  // namespace celos::sim
