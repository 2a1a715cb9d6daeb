// The Job body and the reading of Job and pod objects (kube_job.h).
#include "io/kubernetes/kube_job.h"

#include <fmt/format.h>

#include "celos/time.h"
#include "celos/utf8.h"

namespace celos::kube {
namespace {

namespace json = boost::json;

const json::value* at(const json::value& v, std::initializer_list<std::string_view> path) {
  const json::value* cur = &v;
  for (std::string_view key : path) {
    if (!cur->is_object()) return nullptr;
    cur = cur->as_object().if_contains(key);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

std::string string_at(const json::value& v, std::initializer_list<std::string_view> path) {
  const json::value* found = at(v, path);
  return found && found->is_string() ? std::string(found->as_string()) : std::string();
}

std::int64_t int_at(const json::value& v, std::initializer_list<std::string_view> path) {
  const json::value* found = at(v, path);
  return found && found->is_int64() ? found->as_int64() : 0;
}

json::object string_map(const std::map<std::string, std::string>& values) {
  json::object out;
  for (const auto& [k, v] : values) out[k] = v;
  return out;
}

json::array string_array(const std::vector<std::string>& values, Time t) {
  json::array out;
  for (const auto& v : values) out.push_back(json::value(replace_time_variables(v, t)));
  return out;
}

json::object container(const KubernetesServiceOptions& options, const SlotId& slot,
                       const std::map<std::string, std::string>& env) {
  json::object c{{"name", "main"}, {"image", options.image}};
  if (!options.command.empty()) c["command"] = string_array(options.command, slot.time);
  if (!options.args.empty()) c["args"] = string_array(options.args, slot.time);
  json::array vars;
  for (const auto& [name, value] : env)
    vars.push_back(json::object{{"name", name}, {"value", value}});
  c["env"] = std::move(vars);
  json::object amounts;
  if (!options.cpu.empty()) amounts["cpu"] = options.cpu;
  if (!options.memory.empty()) amounts["memory"] = options.memory;
  if (!amounts.empty()) c["resources"] = json::object{{"requests", amounts}, {"limits", amounts}};
  return c;
}

}  // namespace

std::string slot_label(const SlotId& slot) {
  const CivilTime t = to_civil(slot.time);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", t.year, t.month, t.day, t.hour, t.minute,
                     t.second);
}

json::object job_body(const KubernetesServiceOptions& options, const SlotId& slot,
                      const std::string& name, const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> labels = options.labels;
  labels[kWorkflowLabel] = kubernetes_label_value(slot.workflow);
  labels[kSlotLabel] = slot_label(slot);
  const json::object annotations{{kWorkflowLabel, slot.workflow},
                                 {kSlotLabel, format_time(slot.time)}};
  json::object pod_spec{{"restartPolicy", "Never"},
                        {"containers", json::array{container(options, slot, env)}}};
  if (!options.service_account.empty()) pod_spec["serviceAccountName"] = options.service_account;
  if (!options.node_selector.empty()) pod_spec["nodeSelector"] = string_map(options.node_selector);
  json::object spec{
      {"suspend", true},
      {"backoffLimit", 0},
      {"template", json::object{{"metadata", json::object{{"labels", string_map(labels)},
                                                          {"annotations", annotations}}},
                                {"spec", std::move(pod_spec)}}}};
  if (options.ttl_seconds_after_finished) {
    spec["ttlSecondsAfterFinished"] = *options.ttl_seconds_after_finished;
  }
  return json::object{
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata",
       json::object{{"name", name}, {"labels", string_map(labels)}, {"annotations", annotations}}},
      {"spec", std::move(spec)}};
}

bool is_suspended(const json::value& job) {
  const json::value* s = at(job, {"spec", "suspend"});
  return s && s->is_bool() && s->as_bool();
}

bool belongs_to(const json::value& job, const SlotId& slot) {
  return string_at(job, {"metadata", "annotations", kWorkflowLabel}) == slot.workflow &&
         string_at(job, {"metadata", "annotations", kSlotLabel}) == format_time(slot.time);
}

bool waits_for_pods(const json::value& job) {
  return int_at(job, {"status", "active"}) > 0 && int_at(job, {"status", "ready"}) == 0;
}

std::string name_of(const json::value& object) { return string_at(object, {"metadata", "name"}); }

std::string uid_of(const json::value& object) { return string_at(object, {"metadata", "uid"}); }

std::string job_of_pod(const json::value& pod) {
  std::string name = string_at(pod, {"metadata", "labels", "batch.kubernetes.io/job-name"});
  return name.empty() ? string_at(pod, {"metadata", "labels", "job-name"}) : name;
}

ExternalStatus job_status(const json::value& job, const std::string& external_id) {
  const json::value* conditions = at(job, {"status", "conditions"});
  if (conditions && conditions->is_array()) {
    for (const json::value& c : conditions->as_array()) {
      if (string_at(c, {"status"}) != "True") continue;
      const std::string type = string_at(c, {"type"});
      if (type == "Complete") return ExternalStatus::kSuccess;
      if (type != "Failed") continue;
      const std::string reason = string_at(c, {"reason"});
      const std::string message = string_at(c, {"message"});
      return ExternalStatus(JobState::kFailure,
                            clipped(fmt::format("Kubernetes Job {} failed{}{}", external_id,
                                                reason.empty() ? "" : ": " + reason,
                                                message.empty() ? "" : " (" + message + ")"),
                                    500));
    }
  }
  if (is_suspended(job)) return ExternalStatus::kSubmitted;
  return ExternalStatus::kRunning;
}

std::optional<std::string> pending_reason(const json::value& pod) {
  if (string_at(pod, {"status", "phase"}) != "Pending") return std::nullopt;
  const json::value* conditions = at(pod, {"status", "conditions"});
  if (conditions && conditions->is_array()) {
    for (const json::value& c : conditions->as_array()) {
      if (string_at(c, {"type"}) == "PodScheduled" && string_at(c, {"status"}) == "False") {
        const std::string reason = string_at(c, {"reason"});
        return clipped(
            fmt::format("pod {} is {}: {}", name_of(pod), reason.empty() ? "not scheduled" : reason,
                        string_at(c, {"message"})),
            500);
      }
    }
  }
  const json::value* containers = at(pod, {"status", "containerStatuses"});
  if (containers && containers->is_array()) {
    for (const json::value& c : containers->as_array()) {
      const std::string reason = string_at(c, {"state", "waiting", "reason"});
      if (!reason.empty() && reason != "ContainerCreating" && reason != "PodInitializing") {
        return clipped(fmt::format("pod {} waits: {}: {}", name_of(pod), reason,
                                   string_at(c, {"state", "waiting", "message"})),
                       500);
      }
    }
  }
  return std::nullopt;
}

std::string status_message(const std::string& body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (!ec) {
    const std::string message = string_at(v, {"message"});
    if (!message.empty()) return clipped(message, 500);
  }
  return clipped(body.substr(0, body.find('\n')), 200);
}

}  // namespace celos::kube
