// GET /api/v1/oozie-notification and the job index behind it (celos/running_jobs.h).
#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api_params.h"
#include "celos/running_jobs.h"

namespace celos {

void RunningJobs::on_slot_changes(const std::vector<SlotChange>& changes) {
  MutexLock lock(mutex_);
  for (const SlotChange& change : changes) {
    if (change.from && change.from->status == SlotStatus::kRunning && change.from->external_id) {
      jobs_.erase(*change.from->external_id);
    }
    if (change.to.status == SlotStatus::kRunning && change.to.external_id) {
      jobs_[*change.to.external_id] = change.to.id;
    }
  }
}

void RunningJobs::seed(Scheduler& scheduler, Time now) {
  const WorkflowConfigPtr config = scheduler.config();
  std::map<std::string, SlotId> found;
  for (const auto& [id, _] : config->workflows) {
    auto window = scheduler.state_database().get_window(id, now - kSlidingWindow, now);
    if (!window) {
      spdlog::warn(
          "Oozie notifications: the running jobs of {} are not known until they "
          "change: {}",
          id, window.error().message);
      continue;
    }
    for (const SlotState& s : window->open) {
      if (s.status == SlotStatus::kRunning && s.external_id) found[*s.external_id] = s.id;
    }
  }
  MutexLock lock(mutex_);
  found.merge(jobs_);  // what changed since is newer
  jobs_.swap(found);
}

std::optional<SlotId> RunningJobs::find(const std::string& external_id) const {
  MutexLock lock(mutex_);
  auto it = jobs_.find(external_id);
  if (it == jobs_.end()) return std::nullopt;
  return it->second;
}

std::size_t RunningJobs::size() const {
  MutexLock lock(mutex_);
  return jobs_.size();
}

namespace {

// The slot `job` runs for, as stored now (the index may lag a change by a moment).
std::optional<SlotId> running_slot_of(const Api& api, const RunningJobs& jobs,
                                      const std::string& job) {
  auto slot = jobs.find(job);
  if (!slot) return std::nullopt;
  auto stored = api.scheduler().state_database().get_slot(*slot);
  if (!stored || !stored->has_value()) return std::nullopt;
  const SlotState& state = **stored;
  if (state.status != SlotStatus::kRunning || state.external_id != job) return std::nullopt;
  return slot;
}

HttpServerResponse notification(const Api& api, const RunningJobs* jobs,
                                const HttpServerRequest& request) {
  auto job = required_param(request, "jobId");
  if (!job) return error_response(job.error());
  const std::string* status = query_param(request, "status");
  if (jobs == nullptr) {
    return json_error(404,
                      "Oozie notifications are off on this server (they need "
                      "--autoSchedule; --oozie-notifications=false turns them off)");
  }
  auto slot = running_slot_of(api, *jobs, *job);
  if (!slot) {
    return json_error(404,
                      fmt::format("no RUNNING slot of this celos-server has job \"{}\"", *job));
  }
  spdlog::info("Oozie notification: job {} of slot {} says {}; asking Oozie", *job,
               to_string(*slot), status ? *status : "nothing");
  api.post_event(EventSource::kJob, {slot->workflow});
  return json_response(boost::json::object{{"ok", true}});
}

}  // namespace

void register_oozie_notification_route(RouteTable& table, const Api& api, const RunningJobs* jobs) {
  table.add({.method = "GET",
             .path = "/oozie-notification",
             .role = Role::kPublic,
             .mutates = true,
             .summary = "Oozie's job notification (oozie.wf.workflow.notification.url): steps "
                        "the job's workflow at once; the status is asked of Oozie, never taken "
                        "from here",
             .params = {{.name = "jobId", .required = true, .description = "the Oozie job id"},
                        {.name = "status",
                         .description = "the job's status as Oozie sent it (logged only)"}},
             .response_schema = R"({"type":"object","properties":{"ok":{"type":"boolean"}}})",
             .handler = [&api, jobs](const HttpServerRequest& request) {
               return notification(api, jobs, request);
             }});
}

}  // namespace celos
