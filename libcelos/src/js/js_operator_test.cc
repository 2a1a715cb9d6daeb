// retryDelaySeconds, retryBackoffFactor, maxRetryDelaySeconds and notify through the real
// loader: defaults, values, and load errors that name the file and the field.
#include <catch2/catch.hpp>

#include "js/js_loader_test_util.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

using testing::TempDir;
using testing::write_text_file;

WorkflowConfigPtr load_operator_one(TempDir& dir, const std::string& fields) {
  write_text_file(dir / "workflows/wf.js",
                  "celos.defineWorkflow({id: 'wf', schedule: celos.hourlySchedule(), "
                  "schedulingStrategy: celos.serialSchedulingStrategy(), trigger: "
                  "celos.alwaysTrigger(), externalService: celos.commandExternalService('true')" +
                      fields + "});\n");
  return js_test::load_directory(dir.path());
}

}  // namespace

TEST_CASE("retry back-off and notify have defaults and take the given values") {
  TempDir dir;
  auto plain = load_operator_one(dir, "");
  REQUIRE(plain->find("wf"));
  CHECK(plain->find("wf")->retry_delay_seconds == 0);
  CHECK(plain->find("wf")->retry_backoff_factor == 2);
  CHECK(plain->find("wf")->max_retry_delay_seconds == 3600);
  CHECK(plain->find("wf")->notify.empty());
  TempDir dir2;
  auto config = load_operator_one(dir2,
                                  ", retryDelaySeconds: 60, retryBackoffFactor: 1.5, "
                                  "maxRetryDelaySeconds: 600, notify: [{on: ['FAILURE', "
                                  "'WAIT_TIMEOUT'], webhook: 'http://127.0.0.1:9/hook'}]");
  const Workflow* wf = config->find("wf");
  REQUIRE(wf);
  CHECK(wf->retry_delay_seconds == 60);
  CHECK(wf->retry_backoff_factor == 1.5);
  CHECK(wf->max_retry_delay_seconds == 600);
  REQUIRE(wf->notify.size() == 1);
  CHECK(wf->notify[0].on ==
        std::vector<SlotStatus>{SlotStatus::kFailure, SlotStatus::kWaitTimeout});
  CHECK(wf->notify[0].webhook == "http://127.0.0.1:9/hook");
}

TEST_CASE("bad retry back-off and notify fields are load errors naming the file and field") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {", retryDelaySeconds: -1", "retryDelaySeconds"},
      {", retryDelaySeconds: '60'", "retryDelaySeconds"},
      {", retryDelaySeconds: 1.5", "retryDelaySeconds"},
      {", retryBackoffFactor: 0.5", "retryBackoffFactor"},
      {", maxRetryDelaySeconds: true", "maxRetryDelaySeconds"},
      {", notify: {on: ['FAILURE'], webhook: 'http://x'}", "notify"},
      {", notify: [{on: [], webhook: 'http://x'}]", "notify\"[0].on"},
      {", notify: [{on: ['FAILED'], webhook: 'http://x'}]", "FAILED"},
      {", notify: [{on: ['FAILURE'], webhook: 'ftp://x'}]", "webhook"},
  };
  for (const auto& [fields, expected] : cases) {
    TempDir dir;
    auto config = load_operator_one(dir, fields);
    INFO(fields);
    CHECK(config->find("wf") == nullptr);
    REQUIRE(config->errors.size() == 1);
    CHECK(config->errors[0].file == "wf.js");
    CHECK(config->errors[0].message.find(expected) != std::string::npos);
  }
}

}  // namespace celos
