// What the tests that go through the real loader share: the workflows of <root>/workflows with
// the defaults of <root>/defaults (state under <root>/db), loaded once.
#pragma once

#include <string>

#include "celos/workflow_loader.h"

namespace celos::js_test {

inline WorkflowConfigPtr load_directory(const std::string& root) {
  WorkflowLoaderOptions options;
  options.workflows_dir = root + "/workflows";
  options.defaults_dir = root + "/defaults";
  options.db_dir = root + "/db";
  return make_js_workflow_source(options)->load();
}

}  // namespace celos::js_test
