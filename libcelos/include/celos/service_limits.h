// Rate limits per external service endpoint (issue 29): `celos.serviceLimits(endpoint,
// {submitsPerSecond, maxConcurrent})` in a defaults file caps the submissions the step makes to
// one Oozie server, Slurm partition, command host or Kubernetes namespace, for live and backfill
// slots alike.
//
// The endpoint is what ExternalService::limit_endpoint() answers: "<kind> <target>", e.g.
// `oozie http://oozie:11000/oozie`, `slurm batch` (a partition; `slurm` for the cluster's
// default one), `command build-01` (the host the commands run on), `kubernetes etl` (a
// namespace; `kubernetes` for the context's own). docs/javascript-api.md lists them.
//
// submitsPerSecond r: the endpoint has max(1, floor(r)) tokens; a submission takes one when the
// step admits it, and the token is back 1 s (r >= 1) or 1/r s (r < 1) after the call returned,
// on the step's clock (its `now`, plus the time the step has taken so far). So no window of one
// second ever holds more than floor(r) submissions as the service receives them, however long
// the calls take (a bucket that refills continuously would let 2r through in one).
// maxConcurrent n: a slot is submitted only while the endpoint has fewer than n RUNNING slots.
// A pick that a limit holds back stays READY and is tried again by a later step; within one
// step an endpoint's capacity goes to the live picks of its workflows first, round robin, and
// then to the backfill picks (as the lanes of step_run.h within one workflow).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "celos/mutex.h"
#include "celos/time.h"

namespace celos {

struct WorkflowConfig;

struct ServiceLimits {
  std::optional<double> submits_per_second;
  std::optional<int> max_concurrent;
  friend bool operator==(const ServiceLimits&, const ServiceLimits&) = default;
};

// A celos.serviceLimits call and where it was made (the workflow file that ran it).
struct ServiceLimitDeclaration {
  std::string endpoint;
  ServiceLimits limits;
  std::string file;
  int line = 0;
};

// Registers the declarations of every file into config.service_limits (in order); a different
// declaration of an endpoint already declared is a load error of the later file.
void link_service_limits(WorkflowConfig& config,
                         const std::vector<ServiceLimitDeclaration>& declarations);

enum class ServiceLimit { kSubmitsPerSecond, kMaxConcurrent };
// "submitsPerSecond", "maxConcurrent": the metric label and the JavaScript name.
std::string_view to_string(ServiceLimit limit);

// The tokens of `submits_per_second` and how long a spent one stays away.
struct TokenRule {
  int tokens = 1;
  std::chrono::milliseconds period{1000};
};
TokenRule token_rule(double submits_per_second);

// What limits the submissions of all steps of one server (the Scheduler owns one): the tokens
// of each endpoint, and the RUNNING slots of each workflow as of the last step that loaded it.
// Thread-safe: the step's tasks spend tokens concurrently.
class ServiceLimiter {
 public:
  // Reserves up to `want` tokens of `endpoint` at `now`; returns how many. Each reserved token
  // is either spent() by a call or released().
  int reserve(const std::string& endpoint, double submits_per_second, int want, Time now)
      EXCLUDES(mutex_);
  // One reserved token used by a submission made at `at`.
  void spend(const std::string& endpoint, Time at) EXCLUDES(mutex_);
  // `n` reserved tokens not used (the step stopped before the calls).
  void release(const std::string& endpoint, int n) EXCLUDES(mutex_);

  // The RUNNING slots of the workflows a step loaded: workflow id -> (endpoint, count). A step
  // that loaded every workflow (`full`) replaces the book; a partial one updates its entries.
  using RunningBook = std::map<std::string, std::pair<std::string, int>>;
  void record_running(RunningBook running, bool full) EXCLUDES(mutex_);
  // The RUNNING slots by endpoint of the workflows not in `stepped`; nothing until a full step
  // was recorded (the other workflows are unknown then).
  std::optional<std::map<std::string, int>> running_elsewhere(
      const std::set<std::string>& stepped) const EXCLUDES(mutex_);
  // Forgets the book (no limits configured: nothing keeps it current).
  void forget_running() EXCLUDES(mutex_);

 private:
  struct Bucket {
    int reserved = 0;
    std::chrono::milliseconds period{1000};
    std::multiset<Time> back;  // when each spent token comes back
  };
  mutable Mutex mutex_;
  std::map<std::string, Bucket> buckets_ GUARDED_BY(mutex_);
  RunningBook running_ GUARDED_BY(mutex_);
  bool full_seen_ GUARDED_BY(mutex_) = false;
};

// One step's share of an endpoint's capacity: `wants` holds each workflow's live and backfill
// picks (live first in its pick order); the answer, per workflow, how many of its picks (a
// prefix) go: `capacity` handed out one pick per workflow per round, every live pick before any
// backfill pick.
std::vector<std::size_t> share_capacity(
    const std::vector<std::pair<std::size_t, std::size_t>>& wants, std::size_t capacity);

}  // namespace celos
