// celos-ci --plan: what the deploy would change in the target's schedule, without deploying.
// The deployed NAME.js files and the target's defaults are read through the target's file
// systems; the new ones come from the deployment directory; celos plan compares them.
#include <sstream>

#include "celos/deploy.h"
#include "celos/simulate.h"

namespace celos {
namespace {

// The target's defaults directory, every .js file of it (a workflow may import another
// project's defaults); an absent directory is empty.
Result<std::map<std::string, std::string>> read_defaults(FileSystem& fs, const std::string& dir) {
  std::map<std::string, std::string> out;
  auto entries = fs.list(dir);
  if (!entries) {
    if (entries.error().code == ErrorCode::kNotFound) return out;
    return tl::unexpected(entries.error());
  }
  for (const FileStatus& e : *entries) {
    if (e.is_directory || e.name.size() < 3 || e.name.substr(e.name.size() - 3) != ".js") continue;
    auto text = fs.read(dir + "/" + e.name);
    if (!text) return tl::unexpected(text.error());
    out[e.name] = std::move(*text);
  }
  return out;
}

std::string deploy_parent(const std::string& path) {
  return path.substr(0, path.find_last_of('/'));
}

}  // namespace

Result<bool> plan_deploy(const DeployPlan& plan, const Deployment& deployment, Time now,
                         DeployReporter& reporter) {
  const std::string file = plan.workflow_name + ".js";
  WorkflowFiles deployed;
  auto defaults = read_defaults(*plan.defaults_fs, deploy_parent(plan.defaults_js_path));
  if (!defaults) return tl::unexpected(defaults.error());
  deployed.defaults = std::move(*defaults);
  auto current = plan.workflows_fs->read(plan.workflow_js_path);
  if (current) {
    deployed.workflows[file] = std::move(*current);
  } else if (current.error().code != ErrorCode::kNotFound) {
    return tl::unexpected(current.error());
  }
  WorkflowFiles next = deployed;
  next.workflows.erase(file);
  next.defaults.erase(file);
  if (deployment.workflow_js) next.workflows[file] = *deployment.workflow_js;
  if (deployment.defaults_js) next.defaults[file] = *deployment.defaults_js;
  PlanOptions options;
  options.now = now;
  std::ostringstream out, err;
  auto changed = plan_files(deployed, next, options, out, err);
  if (!changed) return changed;
  reporter.step("plan: what deploying " + plan.workflow_name + " changes (nothing deployed)");
  std::istringstream lines(err.str() + out.str());
  for (std::string line; std::getline(lines, line);) reporter.step(line);
  reporter.finish();
  return changed;
}

}  // namespace celos
