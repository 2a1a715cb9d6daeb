// The argument checks of the JavaScript API (SPEC §3, §15): the first byte picks a celos.*
// function, the rest is its argument list as JavaScript source. Whatever the arguments, the
// file's evaluation ends with workflows or a load error naming the file; never a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "js/js_api.h"

namespace {

constexpr const char* kFunctions[] = {
    "defineWorkflow",
    "hourlySchedule",
    "minutelySchedule",
    "cronSchedule",
    "dependentSchedule",
    "serialSchedulingStrategy",
    "alwaysTrigger",
    "successTrigger",
    "hdfsCheckTrigger",
    "andTrigger",
    "orTrigger",
    "notTrigger",
    "delayTrigger",
    "offsetTrigger",
    "commandExternalService",
    "oozieExternalService",
    "slurmExternalService",
    "importDefaults",
    "replaceTimeVariables",
    "mergeProperties",
    "dataset",
    "statusTrigger",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const char* fn = kFunctions[data[0] % (sizeof kFunctions / sizeof kFunctions[0])];
  const std::string_view args(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string source = "celos." + std::string(fn) + "(" + std::string(args) + ");\n";
  celos::js::EvalSettings settings;
  settings.db_dir = "/nonexistent-celos-fuzz-db";
  settings.defaults_dir = "/nonexistent-celos-fuzz-defaults";
  settings.max_eval_time = std::chrono::milliseconds(500);
  settings.max_heap_bytes = 16 * 1024 * 1024;
  const auto result = celos::js::evaluate_workflow_file(settings, "fuzz.js", source);
  for (const auto& error : result.errors) {
    if (error.file.empty()) __builtin_trap();
  }
  return 0;
}
