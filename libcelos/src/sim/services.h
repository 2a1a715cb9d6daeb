// The simulated world of `celos simulate` (docs/simulate.md): library code behind celos's own
// interfaces, so that the real Scheduler step runs unchanged on it.
//
//   * make_memory_state_database(): a StateDatabase in memory (slots, rerun markers, pause flags,
//     maintenance, history, announcements), compact enough for 720,000 slots.
//   * SimFileSystems: one namespace of paths in memory that every file system URI sees, with
//     outages per URI glob; its resolver hands out one view per URI.
//   * SimExternalService: jobs that take the scenario's duration and end as the scenario says
//     (fail on attempt n, at slot times, at a seeded random rate), with outages.
//
// Time is read from the simulation's Clock (a ManualClock the driver sets to each step's
// `now`). Nothing here touches a real file, service or database. Thread-safe like the
// interfaces they implement.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "celos/clock.h"
#include "celos/external_service.h"
#include "celos/file_system.h"
#include "celos/mutex.h"
#include "celos/state_db.h"
#include "sim/scenario.h"

namespace celos::sim {

std::unique_ptr<StateDatabase> make_memory_state_database();

// When the scenario's outages put an external service or a file system out of reach.
class Outages {
 public:
  Outages(const std::vector<OutageSpec>& specs, const Clock& clock)
      : specs_(specs), clock_(clock) {}
  // "simulated outage (outages[0]) until T" when down at the clock's now, else "".
  std::string service_down(std::string_view kind, const std::string& endpoint) const;
  std::string file_system_down(const std::string& uri) const;

 private:
  std::vector<OutageSpec> specs_;
  const Clock& clock_;
};

// The simulated file systems: a set of files and directories in memory, one namespace for every
// URI. resolve(uri) returns a view that fails with kUnavailable while an outage covers `uri`.
class SimFileSystems final : public FileSystemResolver {
 public:
  explicit SimFileSystems(const Outages& outages);
  ~SimFileSystems() override;
  [[nodiscard]] Result<std::shared_ptr<FileSystem>> resolve(std::string_view uri) override;
  // The namespace itself, without outages (the driver writes arriving data into it).
  FileSystem& store() { return *store_; }

 private:
  const Outages& outages_;
  std::shared_ptr<FileSystem> store_;
  Mutex mutex_;
  std::map<std::string, std::shared_ptr<FileSystem>, std::less<>> views_ GUARDED_BY(mutex_);
};

// One workflow's simulated service. Describes itself, and answers traits(), as the service it
// stands in for (`real`), so that the step treats it the same way; its jobs are simulated.
std::shared_ptr<ExternalService> make_sim_service(std::string workflow, ExternalServicePtr real,
                                                  const JobSpec& job, const Clock& clock,
                                                  const Outages& outages);

// Whether attempt `attempt` of slot `slot` of `workflow` fails by `job`'s rules (pure: the same
// answer in every run and for any order of calls).
bool attempt_fails(const JobSpec& job, const std::string& workflow, Time slot, int attempt);

}  // namespace celos::sim
