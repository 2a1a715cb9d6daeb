// One scheduler wired to fakes for the tests: a file state database (in memory or in a temporary
// directory), the file system triggers and datasets see, a fake service, a resolver, a static
// workflow source, a manual clock and the real Scheduler. What the stories need differently is
// a WorldOptions value; a test file adds its own workflows and helpers on top (derive or call).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "celos/clock.h"
#include "celos/file_system.h"
#include "celos/scheduler.h"
#include "celos/state_db.h"
#include "testing/fakes.h"
#include "testing/temp_dir.h"

namespace celos::testing {

inline const Time kStart = make_time(2015, 9, 13, 0);

struct WorldOptions {
  enum class Db {
    kMemory,     // the file state database on db_fs, a MemFileSystem, under "/db"
    kLocalDisk,  // the file state database on the local disk, in dir / "db"
  };
  Db db = Db::kMemory;
  // Wraps the database the scheduler sees (a counting or failing decorator); empty: none.
  std::function<std::unique_ptr<StateDatabase>(std::unique_ptr<StateDatabase>)> wrap_db = {};
  // What the resolver hands out: `data` when set, else db_fs when data_on_db_fs (one map holds
  // every file the story touches), else data_fs.
  std::shared_ptr<FileSystem> data = {};
  bool data_on_db_fs = false;
  // The workflows' service (a subclass of the fake); empty: a plain FakeExternalService.
  std::shared_ptr<FakeExternalService> service = {};
  // The workflow source; empty: a static source over `config`.
  std::unique_ptr<WorkflowSource> source = {};
  // Records slot history (make_history_recorder) as a listener of the scheduler.
  bool history = false;
  // Where the clock starts.
  Time now = kStart;
};

class SchedulerWorld {
 public:
  explicit SchedulerWorld(WorldOptions options = {});
  SchedulerWorld(const SchedulerWorld&) = delete;
  SchedulerWorld& operator=(const SchedulerWorld&) = delete;
  virtual ~SchedulerWorld();

  std::optional<TempDir> dir;  // with Db::kLocalDisk only
  std::shared_ptr<MemFileSystem> db_fs = std::make_shared<MemFileSystem>();
  std::shared_ptr<MemFileSystem> data_fs = std::make_shared<MemFileSystem>();
  std::shared_ptr<FakeExternalService> service;
  std::unique_ptr<StateDatabase> db;
  FakeFileSystemResolver resolver;
  std::shared_ptr<WorkflowConfig> config = std::make_shared<WorkflowConfig>();
  std::unique_ptr<WorkflowSource> source;
  ManualClock clock;
  Scheduler scheduler;
  std::unique_ptr<SchedulerListener> history;  // with WorldOptions::history only

  // An hourly workflow, one slot at a time, always ready, on `on` (empty: the world's service),
  // from kStart; not yet in the config.
  Workflow workflow(std::string id, ExternalServicePtr on = nullptr) const;
  // Puts a workflow into the config (replacing one of the same id) and returns it there.
  Workflow& add(Workflow w);
  Workflow& add(std::string id, TriggerPtr trigger = make_always_trigger());

  // The stored state of a slot (a waiting one when none is stored).
  SlotState state(const std::string& wf, Time t);
  SlotStatus status(const std::string& wf, Time t) { return state(wf, t).status; }
  // Stores a slot as it is, bypassing the scheduler.
  void store(const std::string& wf, Time t, SlotStatus s, std::optional<std::string> job = {});

  // The clock's wall time as a function (ApiOptions::clock and friends).
  std::function<Time()> clock_function() {
    return [this] { return clock.now(); };
  }
};

}  // namespace celos::testing
