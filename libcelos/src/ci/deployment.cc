// Reading a deployment directory and checking its JavaScript before anything remote changes.
#include <memory>

#include <fmt/format.h>

#include "celos/deploy.h"
#include "js/js_heap.h"

namespace celos {

namespace {

Result<std::optional<std::string>> read_optional(FileSystem& fs, const std::string& path) {
  auto data = fs.read(path);
  if (data) return std::optional<std::string>(std::move(*data));
  if (data.error().code == ErrorCode::kNotFound) return std::optional<std::string>();
  return fail(fmt::format("cannot read {}: {}", path, data.error().message));
}

Result<void> read_tree(FileSystem& fs, const std::string& root, const std::string& relative,
                       Deployment& out) {
  const std::string directory = relative.empty() ? root : root + "/" + relative;
  auto entries = fs.list(directory);
  if (!entries) return fail(fmt::format("cannot list {}: {}", directory, entries.error().message));
  for (const FileStatus& entry : *entries) {
    const std::string child = relative.empty() ? entry.name : relative + "/" + entry.name;
    if (entry.is_directory) {
      out.hdfs_dirs.push_back(child);
      if (auto ok = read_tree(fs, root, child, out); !ok) return ok;
    } else {
      auto data = fs.read(root + "/" + child);
      if (!data)
        return fail(fmt::format("cannot read {}/{}: {}", root, child, data.error().message));
      out.hdfs_files.push_back({child, std::move(*data)});
    }
  }
  return {};
}

}  // namespace

Result<Deployment> read_deployment(FileSystem& fs, const std::string& dir) {
  Deployment deployment;
  const std::string hdfs = dir + "/hdfs";
  auto hdfs_exists = fs.list(hdfs);
  if (!hdfs_exists) {
    if (hdfs_exists.error().code == ErrorCode::kNotFound) {
      return fail(fmt::format("deployment directory {} has no hdfs/ directory", dir),
                  ErrorCode::kInvalid);
    }
    return fail(fmt::format("cannot list {}: {}", hdfs, hdfs_exists.error().message));
  }
  if (auto ok = read_tree(fs, hdfs, "", deployment); !ok) return tl::unexpected(ok.error());
  auto workflow = read_optional(fs, dir + "/workflow.js");
  if (!workflow) return tl::unexpected(workflow.error());
  auto defaults = read_optional(fs, dir + "/defaults.js");
  if (!defaults) return tl::unexpected(defaults.error());
  if (!*workflow && !*defaults) {
    return fail(fmt::format("deployment directory {} has neither workflow.js nor defaults.js", dir),
                ErrorCode::kInvalid);
  }
  deployment.workflow_js = std::move(*workflow);
  deployment.defaults_js = std::move(*defaults);
  return deployment;
}

Result<void> check_javascript_syntax(std::string_view name, std::string_view source) {
  // Compile only: nothing runs, so the file's calls into the celos API need not exist here.
  // The loader's bounded heap: a huge file cannot exhaust the machine.
  auto heap = js::JsHeap::create(64 * 1024 * 1024);
  if (!heap) return fail("cannot create a JavaScript heap");
  duk_context* ctx = heap->context();
  duk_push_lstring(ctx, name.data(), name.size());
  if (duk_pcompile_lstring_filename(ctx, 0, source.data(), source.size()) == 0) return {};
  int line = 0;
  if (duk_is_object(ctx, -1)) {
    duk_get_prop_string(ctx, -1, "lineNumber");
    line = duk_is_number(ctx, -1) ? duk_get_int(ctx, -1) : 0;
    duk_pop(ctx);
  }
  const std::string message = duk_safe_to_string(ctx, -1);
  return fail(fmt::format("{}:{}: {}", name, line, message), ErrorCode::kInvalid);
}

}  // namespace celos
