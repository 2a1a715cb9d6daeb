// What the tests of the celos.* functions share: a file evaluated in a heap of its own, a
// workflow definition with every required field, the single error of a file.
#pragma once

#include <string>

#include <catch2/catch.hpp>

#include "js/js_api.h"

namespace celos::js_test {

using js::EvalSettings;
using js::FileEvaluation;

inline FileEvaluation eval(const std::string& source, const EvalSettings& settings = {}) {
  return js::evaluate_workflow_file(settings, "test.js", source);
}

// A workflow definition with every required field; `fields` adds or overrides some.
inline std::string define(const std::string& fields, const std::string& fn = "defineWorkflow") {
  return "celos." + fn +
         "({id: 'wf', schedule: celos.hourlySchedule(), "
         "schedulingStrategy: celos.serialSchedulingStrategy(), trigger: celos.alwaysTrigger(), "
         "externalService: celos.commandExternalService('true')" +
         (fields.empty() ? "" : ", " + fields) + "});\n";
}

inline Workflow only_workflow(const FileEvaluation& result) {
  INFO((result.errors.empty() ? "" : result.errors[0].message));
  REQUIRE(result.errors.empty());
  REQUIRE(result.workflows.size() == 1);
  return result.workflows[0];
}

inline std::string error_of(const std::string& source, const EvalSettings& settings = {}) {
  const FileEvaluation result = eval(source, settings);
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].file == "test.js");
  return result.errors[0].message;
}

// The JSON of a JavaScript expression, read back through a thrown string.
inline std::string js_value(const std::string& expression) {
  const std::string message = error_of("throw JSON.stringify(" + expression + ");");
  const std::string prefix = "uncaught exception: ";
  REQUIRE(message.rfind(prefix, 0) == 0);
  return message.substr(prefix.size());
}

}  // namespace celos::js_test
