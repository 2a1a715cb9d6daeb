// Workflow loading benchmark (issue 3): N one-workflow files loaded cold, then reloaded with
// nothing changed, then reloaded after one file changed. Usage: celos_js_bench [N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/workflow_loader.h"

using namespace celos;

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

void write_workflow(const std::string& path, int i, const std::string& extra) {
  std::ofstream(path) << fmt::format(
      "celos.importDefaults(\"common\");\n"
      "celos.defineWorkflow({{\n"
      "  \"id\": \"workflow-{:04}\",\n"
      "  \"schedule\": celos.hourlySchedule(),\n"
      "  \"schedulingStrategy\": celos.serialSchedulingStrategy(),\n"
      "  \"trigger\": celos.hdfsCheckTrigger(INPUT + "
      "\"/{}/${{year}}-${{month}}-${{day}}/${{hour}}00/_READY\"),\n"
      "  \"externalService\": celos.commandExternalService(\"true {}\"),\n"
      "}});\n",
      i, i, extra);
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  const std::string dir =
      fmt::format("{}/celos-js-bench-{}", std::filesystem::temp_directory_path().string(), n);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/workflows");
  std::filesystem::create_directories(dir + "/defaults");
  std::ofstream(dir + "/defaults/common.js") << "var INPUT = \"/input\";\n";
  for (int i = 0; i < n; ++i)
    write_workflow(fmt::format("{}/workflows/wf-{:04}.js", dir, i), i, "");

  WorkflowLoaderOptions options;
  options.workflows_dir = dir + "/workflows";
  options.defaults_dir = dir + "/defaults";
  options.db_dir = dir + "/db";
  auto source = make_js_workflow_source(options);

  auto t0 = std::chrono::steady_clock::now();
  auto cold = source->load();
  const double cold_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  auto again = source->load();
  const double unchanged_ms = ms_since(t0);
  write_workflow(fmt::format("{}/workflows/wf-{:04}.js", dir, 0), 0, "changed");
  t0 = std::chrono::steady_clock::now();
  auto changed = source->load();
  const double one_changed_ms = ms_since(t0);

  std::printf(
      "N=%d files: cold load %.1f ms (%zu workflows, %zu errors)  unchanged reload %.2f ms "
      "(same config: %s)  one file changed %.1f ms\n",
      n, cold_ms, cold->workflows.size(), cold->errors.size(), unchanged_ms,
      again == cold ? "yes" : "no", one_changed_ms);
  std::filesystem::remove_all(dir);
  return cold->workflows.size() == static_cast<std::size_t>(n) ? 0 : 1;
}
