// The `celos.*` JavaScript API (SPEC §3, docs/javascript-api.md) and the evaluation of one
// workflow file in its own heap.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "celos/http_client.h"
#include "celos/process_runner.h"
#include "celos/workflow.h"

namespace celos::js {

class JsHeap;

// What evaluating a file needs from the loader's options.
struct EvalSettings {
  std::string defaults_dir;
  std::string db_dir;
  std::chrono::milliseconds max_eval_time{5000};
  std::size_t max_heap_bytes = 64 * 1024 * 1024;
  std::shared_ptr<HttpClient> http;
  std::string oozie_user;
  // oozie.wf.workflow.notification.url given to every Oozie job unless its properties set it
  // (issue 28); empty = none.
  std::string oozie_notification_url;
  // For slurmExternalService (js_slurm.cc): where job directories live (empty: <db>/jobs),
  // where the Slurm commands are (empty: PATH), their time bound, and what runs them (null:
  // the real runner).
  std::string jobs_dir;
  std::string slurm_bin;
  std::chrono::milliseconds io_timeout{30000};
  std::shared_ptr<ProcessRunner> process_runner;
  // For kubernetesExternalService (js_kubernetes.cc): null, a libcurl client made from each
  // service's credentials (TLS verified); tests put a fake here.
  std::shared_ptr<HttpClient> kubernetes_http;
  // The loader's share of its total time budget left for this file's evaluation, when smaller
  // than max_eval_time (properties functions keep max_eval_time).
  std::optional<std::chrono::milliseconds> load_time_limit{};
};

struct FileEvaluation {
  // In definition order; each remembers the line of its defineWorkflow call.
  std::vector<Workflow> workflows;
  std::vector<int> lines;
  // At most one: evaluation stops at the first error (workflows defined before it stay).
  std::vector<LoadError> errors;
  // The defaults names the file imported (also those that failed), for hot reload.
  std::vector<std::string> imported_defaults;
  // The file's heap while something (a properties function) keeps it alive: its memory counts
  // against the loader's total.
  std::weak_ptr<JsHeap> heap{};
  // celos.dataset declarations (also those made in imported defaults files), in order.
  std::vector<DatasetDeclaration> datasets;
  // celos.serviceLimits declarations (also those of imported defaults files), in order.
  std::vector<ServiceLimitDeclaration> service_limits{};
};

// Evaluates the workflow file `file_name` (a name directly in the workflows directory, used in
// messages and line numbers) with the given source text, in a fresh heap.
FileEvaluation evaluate_workflow_file(const EvalSettings& settings, const std::string& file_name,
                                      const std::string& source);

// The path of a defaults file: <defaults_dir>/<name>.js.
std::string defaults_path(const std::string& defaults_dir, const std::string& name);

}  // namespace celos::js
