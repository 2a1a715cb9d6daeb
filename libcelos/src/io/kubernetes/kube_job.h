// The batch/v1 Job celos creates for an attempt, and what a Job (and its pods) say about the
// attempt. Pure functions over JSON values, tested without an API server. Private to
// io/kubernetes/.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <boost/json.hpp>

#include "celos/external_service.h"
#include "celos/kubernetes_service.h"
#include "io/job_environment.h"

namespace celos::kube {

inline constexpr const char* kWorkflowLabel = "celos.workflow";
inline constexpr const char* kSlotLabel = "celos.slot";

// The CELOS_* variables of SPEC §7.2 for `slot`, then `extra` (time variables replaced).
using celos::job_environment;

// The Job to POST for attempt `name` of `slot`: suspended, backoffLimit 0, labels and
// annotations, one container `main`.
boost::json::object job_body(const KubernetesServiceOptions& options, const SlotId& slot,
                             const std::string& name,
                             const std::map<std::string, std::string>& env);

// The value of the celos.slot label of `slot`: 20150912T200000Z.
std::string slot_label(const SlotId& slot);

// spec.suspend is true.
bool is_suspended(const boost::json::value& job);
// The Job's annotations name exactly this slot (a name shortened with a hash could collide).
bool belongs_to(const boost::json::value& job, const SlotId& slot);
// Active pods none of which is ready yet: their pods may be Pending.
bool waits_for_pods(const boost::json::value& job);
// The Job's name (metadata.name), or "".
std::string name_of(const boost::json::value& object);
// Its metadata.uid, or "".
std::string uid_of(const boost::json::value& object);
// The job-name label of a pod (batch.kubernetes.io/job-name or job-name), or "".
std::string job_of_pod(const boost::json::value& pod);

// What a Job says about the attempt: Complete -> success, Failed -> failure with the reason and
// message, suspended -> kSubmitted, else running.
ExternalStatus job_status(const boost::json::value& job, const std::string& external_id);

// "Unschedulable: 0/3 nodes are available ..." when the pod is Pending because no node takes
// it (condition PodScheduled False), or a container waits for a reason worth telling
// (ErrImagePull, ImagePullBackOff, CreateContainerConfigError, ...); nullopt otherwise.
std::optional<std::string> pending_reason(const boost::json::value& pod);

// The message of a meta/v1 Status answer, or the body's first line.
std::string status_message(const std::string& body);

}  // namespace celos::kube
