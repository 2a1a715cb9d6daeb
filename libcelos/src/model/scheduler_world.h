// The scheduler wired to fakes, shared by the scheduler story tests.
#pragma once

#include <memory>
#include <string>

#include "celos/scheduler.h"
#include "testing/fakes.h"

namespace celos::testing {

inline const Time kStart = make_time(2015, 9, 13, 0);

struct World {
  std::shared_ptr<MemFileSystem> db_fs = std::make_shared<MemFileSystem>();
  std::shared_ptr<MemFileSystem> data_fs = std::make_shared<MemFileSystem>();
  std::shared_ptr<FakeExternalService> service = std::make_shared<FakeExternalService>();
  std::unique_ptr<StateDatabase> db = make_file_state_database(db_fs, "/db");
  FakeFileSystemResolver resolver{data_fs};
  std::shared_ptr<WorkflowConfig> config = std::make_shared<WorkflowConfig>();
  std::unique_ptr<WorkflowSource> source = make_static_workflow_source(config);
  Scheduler scheduler{*source, *db, resolver};

  Workflow& add(std::string id, TriggerPtr trigger = make_always_trigger()) {
    Workflow w;
    w.id = id;
    w.schedule = make_hourly_schedule();
    w.strategy = make_serial_strategy(1);
    w.trigger = std::move(trigger);
    w.service = service;
    w.start_time = kStart;
    return config->workflows[id] = w;
  }

  SlotStatus status(const std::string& wf, Time t) {
    auto s = db->get_slot({wf, t});
    REQUIRE(s);
    return s->has_value() ? (*s)->status : SlotStatus::kWaiting;
  }
};


}  // namespace celos::testing
