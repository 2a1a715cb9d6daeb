// The one-call-per-job defaults of the batch calls; services whose protocol can do better
// (Oozie's job list, Slurm's squeue and scontrol release) override them.
#include "celos/external_service.h"

namespace celos {

Result<std::string> ExternalService::submit_with(const SlotId& slot, const SubmitContext&) {
  return submit(slot);
}

std::map<std::string, Result<ExternalStatus>> ExternalService::status_many(
    const std::vector<Job>& jobs) {
  std::map<std::string, Result<ExternalStatus>> out;
  for (const Job& job : jobs) out.emplace(job.external_id, status(job.slot, job.external_id));
  return out;
}

std::map<std::string, Result<void>> ExternalService::start_many(const std::vector<Job>& jobs) {
  std::map<std::string, Result<void>> out;
  for (const Job& job : jobs) out.emplace(job.external_id, start(job.slot, job.external_id));
  return out;
}

}  // namespace celos
