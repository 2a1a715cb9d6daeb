// Deploy and undeploy. A deploy is a short transaction: every change made to the target
// registers how to undo it, and a failure runs the undo list backwards, so the previous
// deployment is what remains (see docs/deploy.md for the order and its reasons).
#include "celos/deploy.h"

#include <functional>
#include <random>

#include <fmt/format.h>

namespace celos {

namespace {

class UndoLog {
 public:
  // `cleanup` steps only remove our own temporary files: when they fail, the previous
  // deployment is still whole and the message says so.
  void add(std::string what, std::function<Result<void>()> undo, bool cleanup = false) {
    steps_.push_back({std::move(what), std::move(undo), cleanup});
  }
  // Runs every undo step (newest first) and describes the outcome for the error message.
  std::string roll_back(DeployReporter& reporter) {
    std::string failures;
    std::string notes;
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      reporter.step("rolling back: " + it->what);
      if (auto ok = it->undo(); !ok) {
        (it->cleanup ? notes : failures) +=
            fmt::format("; could not {}: {}", it->what, ok.error().message);
      }
    }
    steps_.clear();
    if (!failures.empty()) {
      return "; ROLLBACK FAILED, the target may be inconsistent" + failures + notes;
    }
    return "; rolled back, the previous deployment is in place" + notes;
  }

 private:
  struct Step {
    std::string what;
    std::function<Result<void>()> undo;
    bool cleanup;
  };
  std::vector<Step> steps_;
};

Result<std::optional<std::string>> read_if_there(FileSystem& fs, const std::string& path) {
  auto data = fs.read(path);
  if (data) return std::optional<std::string>(std::move(*data));
  if (data.error().code == ErrorCode::kNotFound) return std::optional<std::string>();
  return fail(fmt::format("cannot read {}: {}", path, data.error().message));
}

Result<void> check_syntax(const Deployment& deployment) {
  if (deployment.defaults_js) {
    if (auto ok = check_javascript_syntax("defaults.js", *deployment.defaults_js); !ok) return ok;
  }
  if (deployment.workflow_js) {
    if (auto ok = check_javascript_syntax("workflow.js", *deployment.workflow_js); !ok) return ok;
  }
  return {};
}

Result<void> upload_tree(FileSystem& fs, const std::string& root, const Deployment& deployment,
                         DeployReporter& reporter) {
  if (auto ok = fs.make_dirs(root); !ok) return ok;
  for (const std::string& dir : deployment.hdfs_dirs) {
    if (auto ok = fs.make_dirs(root + "/" + dir); !ok) return ok;
  }
  std::uint64_t bytes_total = 0;
  for (const DeployFile& file : deployment.hdfs_files) bytes_total += file.data.size();
  std::uint64_t bytes_done = 0;
  std::size_t files_done = 0;
  for (const DeployFile& file : deployment.hdfs_files) {
    if (auto ok = fs.write(root + "/" + file.relative_path, file.data); !ok) return ok;
    bytes_done += file.data.size();
    reporter.uploaded(file.relative_path, file.data.size(), ++files_done,
                      deployment.hdfs_files.size(), bytes_done, bytes_total);
  }
  return {};
}

// Leftovers of earlier runs that died between upload and cleanup. Only called after a
// successful swap, when `<root>/NAME` is the deployment and these are garbage.
void remove_leftovers(FileSystem& fs, const std::string& root, const std::string& name,
                      DeployReporter& reporter) {
  auto entries = fs.list(root);
  if (!entries) return;
  const std::string tmp_prefix = "." + name + ".tmp-";
  const std::string old_prefix = "." + name + ".old-";
  for (const FileStatus& entry : *entries) {
    if (entry.name.starts_with(tmp_prefix) || entry.name.starts_with(old_prefix)) {
      const std::string path = root + "/" + entry.name;
      auto ok = fs.remove(path);
      reporter.step(ok ? "removed leftover " + path
                       : "could not remove leftover " + path + ": " + ok.error().message);
    }
  }
}

// Replaces the JS file at `path` (skipped when unchanged, so the server does not reload it).
Result<void> put_js(FileSystem& fs, const std::string& path, const std::string& data,
                    const std::optional<std::string>& old, UndoLog& undo,
                    DeployReporter& reporter) {
  if (old && *old == data) {
    reporter.step("unchanged " + path);
    return {};
  }
  if (auto ok = fs.write(path, data); !ok) {
    return fail(fmt::format("cannot write {}: {}", path, ok.error().message));
  }
  undo.add("restore " + path, [&fs, path, old]() -> Result<void> {
    return old ? fs.write(path, *old) : fs.remove(path);
  });
  reporter.step(fmt::format("wrote {} ({} bytes)", path, data.size()));
  return {};
}

Result<void> swap_in_hdfs(const DeployPlan& plan, const std::string& tmp, const std::string& aside,
                          UndoLog& undo, DeployReporter& reporter) {
  FileSystem& fs = *plan.hdfs_fs;
  auto there = fs.exists(plan.hdfs_dir);
  if (!there) return fail(fmt::format("cannot check {}: {}", plan.hdfs_dir, there.error().message));
  if (*there) {
    if (auto ok = fs.rename(plan.hdfs_dir, aside); !ok) {
      return fail(fmt::format("cannot move {} aside: {}", plan.hdfs_dir, ok.error().message));
    }
    undo.add("move back " + plan.hdfs_dir,
             [&fs, &plan, aside]() { return fs.rename(aside, plan.hdfs_dir); });
  }
  if (auto ok = fs.rename(tmp, plan.hdfs_dir); !ok) {
    return fail(fmt::format("cannot rename {} to {}: {}", tmp, plan.hdfs_dir, ok.error().message));
  }
  undo.add("remove new " + plan.hdfs_dir, [&fs, &plan]() { return fs.remove(plan.hdfs_dir); });
  reporter.step(fmt::format("installed {}", plan.hdfs_dir));
  return {};
}

Result<void> apply(const DeployPlan& plan, const Deployment& deployment, DeployReporter& reporter,
                   const RandomSuffix& suffix, UndoLog& undo, std::string& aside) {
  auto old_workflow = read_if_there(*plan.workflows_fs, plan.workflow_js_path);
  if (!old_workflow) return tl::unexpected(old_workflow.error());
  auto old_defaults = read_if_there(*plan.defaults_fs, plan.defaults_js_path);
  if (!old_defaults) return tl::unexpected(old_defaults.error());

  const std::string tmp =
      fmt::format("{}/.{}.tmp-{}", plan.hdfs_root, plan.workflow_name, suffix());
  aside = fmt::format("{}/.{}.old-{}", plan.hdfs_root, plan.workflow_name, suffix());
  reporter.step(fmt::format("uploading hdfs/ to {}", tmp));
  FileSystem& hdfs = *plan.hdfs_fs;
  undo.add(
      "remove " + tmp, [&hdfs, tmp]() { return hdfs.remove(tmp); }, true);
  if (auto ok = upload_tree(hdfs, tmp, deployment, reporter); !ok) {
    return fail(fmt::format("cannot upload hdfs/ to {}: {}", tmp, ok.error().message));
  }
  if (auto ok = swap_in_hdfs(plan, tmp, aside, undo, reporter); !ok) return ok;
  // Defaults first: a new workflow.js may import what only the new defaults define.
  if (deployment.defaults_js) {
    auto ok = put_js(*plan.defaults_fs, plan.defaults_js_path, *deployment.defaults_js,
                     *old_defaults, undo, reporter);
    if (!ok) return ok;
  }
  if (deployment.workflow_js) {
    auto ok = put_js(*plan.workflows_fs, plan.workflow_js_path, *deployment.workflow_js,
                     *old_workflow, undo, reporter);
    if (!ok) return ok;
  }
  return {};
}

}  // namespace

std::string random_suffix() {
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  return fmt::format("{:016x}", engine());
}

Result<DeployPlan> make_deploy_plan(const CiOptions& options, const DeployTarget& target,
                                    LocationOpener& opener, std::shared_ptr<FileSystem> hdfs_fs) {
  auto workflows = parse_location(target.workflows_dir_url);
  if (!workflows) return tl::unexpected(workflows.error());
  auto defaults = parse_location(target.defaults_dir_url);
  if (!defaults) return tl::unexpected(defaults.error());
  DeployPlan plan;
  plan.workflow_name = options.workflow_name;
  const std::string file_name = options.workflow_name + ".js";
  auto workflows_fs = opener.open(*workflows);
  if (!workflows_fs) return tl::unexpected(workflows_fs.error());
  plan.workflows_fs = std::move(*workflows_fs);
  plan.workflow_js_path = child_location(*workflows, file_name).path;
  auto defaults_fs = opener.open(*defaults);
  if (!defaults_fs) return tl::unexpected(defaults_fs.error());
  plan.defaults_fs = std::move(*defaults_fs);
  plan.defaults_js_path = child_location(*defaults, file_name).path;
  plan.hdfs_fs = std::move(hdfs_fs);
  plan.hdfs_root = options.hdfs_root;
  plan.hdfs_dir = options.hdfs_root + "/" + options.workflow_name;
  return plan;
}

Result<void> deploy(const DeployPlan& plan, const Deployment& deployment, DeployReporter& reporter,
                    const RandomSuffix& suffix) {
  if (auto ok = check_syntax(deployment); !ok) {
    return fail("JavaScript syntax error, nothing deployed: " + ok.error().message,
                ErrorCode::kInvalid);
  }
  reporter.step("JavaScript syntax checked");
  UndoLog undo;
  std::string aside;
  if (auto ok = apply(plan, deployment, reporter, suffix, undo, aside); !ok) {
    const std::string outcome = undo.roll_back(reporter);
    reporter.finish();
    return fail("deploy of " + plan.workflow_name + " failed: " + ok.error().message + outcome,
                ok.error().code);
  }
  // Committed: the old tree is garbage from here on, and failing to remove it is only a note.
  if (auto there = plan.hdfs_fs->exists(aside); there && *there) {
    if (auto ok = plan.hdfs_fs->remove(aside); !ok) {
      reporter.step(fmt::format("could not remove old {}: {}", aside, ok.error().message));
    }
  }
  remove_leftovers(*plan.hdfs_fs, plan.hdfs_root, plan.workflow_name, reporter);
  reporter.step("deployed " + plan.workflow_name);
  reporter.finish();
  return {};
}

Result<void> undeploy(const DeployPlan& plan, DeployReporter& reporter) {
  // The workflow file first, so that the scheduler stops using the rest before it goes.
  const std::pair<FileSystem*, std::string> targets[] = {
      {plan.workflows_fs.get(), plan.workflow_js_path},
      {plan.defaults_fs.get(), plan.defaults_js_path},
      {plan.hdfs_fs.get(), plan.hdfs_dir},
  };
  for (const auto& [fs, path] : targets) {
    if (auto ok = fs->remove(path); !ok) {
      reporter.finish();
      return fail(fmt::format("undeploy of {} failed: cannot remove {}: {}", plan.workflow_name,
                              path, ok.error().message));
    }
    reporter.step("removed " + path);
  }
  reporter.step("undeployed " + plan.workflow_name);
  reporter.finish();
  return {};
}

}  // namespace celos
