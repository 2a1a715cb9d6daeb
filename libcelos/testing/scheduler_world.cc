#include "testing/scheduler_world.h"

#include <catch2/catch.hpp>

#include "celos/slot_history.h"
#include "celos/state_db_open.h"

namespace celos::testing {
namespace {

std::optional<TempDir> dir_for(const WorldOptions& options) {
  if (options.db == WorldOptions::Db::kLocalDisk) return std::make_optional<TempDir>();
  return std::nullopt;
}

std::unique_ptr<StateDatabase> open_db(const WorldOptions& options,
                                       const std::optional<TempDir>& dir,
                                       std::shared_ptr<MemFileSystem> db_fs) {
  auto db = dir ? make_file_state_database(make_local_file_system(), *dir / "db")
                : make_file_state_database(std::move(db_fs), "/db");
  return options.wrap_db ? options.wrap_db(std::move(db)) : std::move(db);
}

std::shared_ptr<FileSystem> data_for(const WorldOptions& options,
                                     const std::shared_ptr<MemFileSystem>& db_fs,
                                     const std::shared_ptr<MemFileSystem>& data_fs) {
  if (options.data) return options.data;
  if (options.data_on_db_fs) return db_fs;
  return data_fs;
}

}  // namespace

SchedulerWorld::SchedulerWorld(WorldOptions options)
    : dir(dir_for(options)),
      service(options.service ? options.service : std::make_shared<FakeExternalService>()),
      db(open_db(options, dir, db_fs)),
      resolver(data_for(options, db_fs, data_fs)),
      source(options.source ? std::move(options.source) : make_static_workflow_source(config)),
      clock(options.now),
      scheduler(*source, *db, resolver) {
  if (options.history) {
    history = make_history_recorder(*db);
    scheduler.add_listener(*history);
  }
}

SchedulerWorld::~SchedulerWorld() = default;

Workflow SchedulerWorld::workflow(std::string id, ExternalServicePtr on) const {
  Workflow w;
  w.id = std::move(id);
  w.schedule = make_hourly_schedule();
  w.strategy = make_serial_strategy(1);
  w.trigger = make_always_trigger();
  w.service = on ? std::move(on) : service;
  w.start_time = kStart;
  return w;
}

Workflow& SchedulerWorld::add(Workflow w) {
  const std::string id = w.id;
  return config->workflows[id] = std::move(w);
}

Workflow& SchedulerWorld::add(std::string id, TriggerPtr trigger) {
  Workflow w = workflow(std::move(id));
  w.trigger = std::move(trigger);
  return add(std::move(w));
}

SlotState SchedulerWorld::state(const std::string& wf, Time t) {
  auto s = db->get_slot({wf, t});
  REQUIRE(s);
  return s->value_or(SlotState::waiting({wf, t}));
}

void SchedulerWorld::store(const std::string& wf, Time t, SlotStatus s,
                           std::optional<std::string> job) {
  REQUIRE(db->put_slots({SlotState::of({wf, t}, s, std::move(job))}));
}

}  // namespace celos::testing
