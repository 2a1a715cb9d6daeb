// External services: what runs a slot's job (Oozie, a local command; SPEC §7).
//
// The scheduler step calls submit() then start() for a slot it picks, and status() on every
// step while the slot is RUNNING. A failure to reach the service is an Error: the slot keeps
// its state and the step goes on with the other workflows. Calls for one workflow come from one
// thread at a time (steps and mutations are serialized by the caller).
#pragma once

#include <memory>
#include <string>

#include "celos/error.h"
#include "celos/slot.h"

namespace celos {

enum class ExternalStatus { kRunning, kSuccess, kFailure };

class ExternalService {
 public:
  virtual ~ExternalService() = default;
  // Creates the job for a slot; returns its external id (e.g. an Oozie job id).
  [[nodiscard]] virtual Result<std::string> submit(const SlotId& slot) = 0;
  // Starts a submitted job.
  [[nodiscard]] virtual Result<void> start(const SlotId& slot, const std::string& external_id) = 0;
  // Where the job is.
  [[nodiscard]] virtual Result<ExternalStatus> status(const SlotId& slot,
                                                      const std::string& external_id) = 0;
  // Stops the job. Not an error if it has already ended.
  [[nodiscard]] virtual Result<void> kill(const SlotId& slot, const std::string& external_id) = 0;
  // `oozie http://host:11000/oozie`, `command "wc -l ..."`: for messages and the API.
  virtual std::string describe() const = 0;
};

using ExternalServicePtr = std::shared_ptr<ExternalService>;

}  // namespace celos
