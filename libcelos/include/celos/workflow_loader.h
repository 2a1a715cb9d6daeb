// The JavaScript workflow loader (SPEC §3): every `.js` file directly in the workflows
// directory, each evaluated in its own fresh global scope with the `celos` API.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "celos/http_client.h"
#include "celos/process_runner.h"
#include "celos/workflow.h"

namespace celos {

struct WorkflowLoaderOptions {
  std::string workflows_dir;
  std::string defaults_dir;
  // The state database directory: the command service keeps its jobs under <db>/jobs.
  std::string db_dir;
  // Bounds for one file's evaluation (runaway files are that file's error).
  std::chrono::milliseconds max_eval_time{5000};
  std::size_t max_heap_bytes = 64 * 1024 * 1024;
  // Bounds for all files together: the time one load() spends evaluating files, and the memory
  // of the heaps kept alive (properties functions). A file beyond either bound gets a load
  // error naming the bound and is tried again at the next load.
  std::chrono::milliseconds max_total_eval_time{60000};
  std::size_t max_total_heap_bytes = std::size_t{512} * 1024 * 1024;
  // For oozieExternalService; may be null (then submitting to Oozie is an error).
  std::shared_ptr<HttpClient> http;
  // `user.name` sent to Oozie, if not empty.
  std::string oozie_user;
  // Issue 28: oozie.wf.workflow.notification.url of every Oozie job (a workflow's properties
  // may override it), e.g. <advertised URL>/api/v1/oozie-notification?jobId=$jobId&status=$status;
  // empty = not set.
  std::string oozie_notification_url{};
  // For slurmExternalService: the jobs directory (empty: <db_dir>/jobs), the directory of the
  // Slurm commands (`--slurm-bin`; empty: PATH), the bound of each Slurm command
  // (`--io-timeout`), and what runs them (null: the real process runner).
  std::string jobs_dir{};
  std::string slurm_bin{};
  std::chrono::milliseconds io_timeout{30000};
  std::shared_ptr<ProcessRunner> process_runner{};
};

// A WorkflowSource that re-reads the files on load() and re-evaluates only when a workflow or
// defaults file changed (by name, size and modification time). Errors are per file and logged.
std::unique_ptr<WorkflowSource> make_js_workflow_source(WorkflowLoaderOptions options);

}  // namespace celos
