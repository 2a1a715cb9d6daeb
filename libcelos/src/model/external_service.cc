// The one-call-per-job defaults of the batch calls; services whose protocol can do better
// (Oozie's job list, Slurm's squeue and scontrol release) override them.
#include "celos/external_service.h"

#include <fmt/format.h>

#include "celos/slot.h"

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

Result<std::string> ExternalService::job_log(const SlotId& slot, const std::string& external_id,
                                             std::string_view, std::size_t) {
  return fail(fmt::format("slot {} runs on {}: its output is not kept by celos (job {})",
                          to_string(slot), kind(), external_id),
              ErrorCode::kNotFound);
}

}  // namespace celos
