#include "io/job_environment.h"

#include <fmt/format.h>

#include "celos/time.h"

namespace celos {

std::map<std::string, std::string> job_environment(
    const SlotId& slot, const std::map<std::string, std::string>& extra) {
  const CivilTime civil = to_civil(slot.time);
  std::map<std::string, std::string> vars = {
      {"CELOS_WORKFLOW_ID", slot.workflow},
      {"CELOS_SLOT_TIME", format_time(slot.time)},
      {"CELOS_YEAR", fmt::format("{:04}", civil.year)},
      {"CELOS_MONTH", fmt::format("{:02}", civil.month)},
      {"CELOS_DAY", fmt::format("{:02}", civil.day)},
      {"CELOS_HOUR", fmt::format("{:02}", civil.hour)},
      {"CELOS_MINUTE", fmt::format("{:02}", civil.minute)},
      {"CELOS_SECOND", fmt::format("{:02}", civil.second)},
  };
  for (const auto& [name, value] : extra) vars[name] = replace_time_variables(value, slot.time);
  return vars;
}

}  // namespace celos
