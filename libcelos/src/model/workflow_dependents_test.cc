// The dependency index of event-driven steps: who waits on which workflow and dataset.
#include "celos/workflow_dependents.h"

#include <catch2/catch.hpp>

#include "celos/dataset.h"
#include "testing/scheduler_world.h"

using namespace celos;
using celos::testing::FakeExternalService;
using celos::testing::kStart;

namespace {

struct WorkflowDependentsWorld : celos::testing::SchedulerWorld {
  Workflow& add(std::string id, TriggerPtr trigger = nullptr) {
    Workflow w = workflow(id, std::make_shared<FakeExternalService>());
    w.trigger = std::move(trigger);
    w.file = id + ".js";
    return SchedulerWorld::add(std::move(w));
  }
};

}  // namespace

TEST_CASE("success and status triggers anywhere in a trigger tree make their workflow dependent") {
  WorkflowDependentsWorld w;
  w.add("a", make_always_trigger());
  w.add("b", make_always_trigger());
  w.add(
      "c",
      make_and_trigger(
          {make_hdfs_check_trigger("/x/${hour}", ""), make_not_trigger(make_success_trigger("a")),
           make_or_trigger({make_delay_trigger(60),
                            make_offset_trigger(-3600, make_status_trigger("b", {"FAILURE"}))})}));
  const WorkflowDependents index = workflow_dependents(*w.config, kStart);
  CHECK(index.workflow("a") == std::set<std::string>{"c"});
  CHECK(index.workflow("b") == std::set<std::string>{"c"});
  CHECK(index.workflow("c").empty());
  CHECK(index.workflow("nope").empty());
  CHECK(index.of_file_system.at("") == std::set<std::string>{"c"});
}

TEST_CASE("a dataset's consumers depend on the dataset and on its producer") {
  WorkflowDependentsWorld w;
  w.add("producer", make_always_trigger()).outputs = {{"clicks"}};
  w.add("consumer").inputs = {{"clicks"}};
  w.add("incremental").inputs = {{"clicks", 0, InputMode::kNew, 2}};
  link_datasets(
      *w.config,
      {{Dataset{"clicks", "/data/${year}/${month}/${day}/${hour}", "", "_SUCCESS"}, "d.js", 1}});
  REQUIRE(w.config->errors.empty());
  const WorkflowDependents index = workflow_dependents(*w.config, kStart);
  CHECK(index.dataset("clicks") == std::set<std::string>{"consumer", "incremental"});
  CHECK(index.workflow("producer").count("consumer") == 1);
  CHECK(index.workflow("producer").count("incremental") == 1);
  CHECK(index.of_file_system.empty());  // a produced dataset is present by its producer's slot
}
