// Setting up a simulated world: a scratch directory for the copied workflow files, the JS loader
// on them, and the services that stand in for the real ones.
#include "sim/world.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "celos/workflow_loader.h"

namespace celos::sim {
namespace {

namespace fs = std::filesystem;

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

class SimWorkflowSource final : public WorkflowSource {
 public:
  SimWorkflowSource(std::unique_ptr<WorkflowSource> js, const std::vector<JobSpec>& jobs,
                    const Clock& clock, const Outages& outages)
      : js_(std::move(js)), jobs_(jobs), clock_(clock), outages_(outages) {}

  // The files never change during a simulation: they are read once (a thousand workflows'
  // files checked at every step would cost more than the step).
  WorkflowConfigPtr load() override {
    if (simulated_) return simulated_;
    WorkflowConfigPtr loaded = js_->load();
    if (loaded == loaded_) return simulated_;
    auto config = std::make_shared<WorkflowConfig>(*loaded);
    for (auto& [id, wf] : config->workflows) wf.service = service_of(id, wf.service);
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
    for (const JobSpec& j : jobs_) {
      if (glob_match(j.workflow, id)) {
        job = &j;
        break;
      }
    }
    return services_[id] = make_sim_service(id, real, *job, clock_, outages_);
  }

  std::unique_ptr<WorkflowSource> js_;
  const std::vector<JobSpec>& jobs_;
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
                                                         const std::vector<JobSpec>& jobs,
                                                         const Clock& clock,
                                                         const Outages& outages) {
  return std::make_unique<SimWorkflowSource>(std::move(js), jobs, clock, outages);
}

World::World(const Scenario& s, const std::string& scratch, std::ostream* timeline_out)
    : scenario(s),
      clock(s.start),
      outages(s.outages, clock),
      file_systems(outages),
      db(make_memory_state_database()),
      source(make_sim_workflow_source(make_js_workflow_source(loader_options(scratch)), s.jobs,
                                      clock, outages)),
      scheduler(*source, *db, file_systems),
      timeline(timeline_out) {
  scheduler.add_listener(timeline);
}

}  // namespace celos::sim
