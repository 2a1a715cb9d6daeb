// The state of one workflow file's evaluation, shared by the API functions (js_api.cc) and the
// evaluation driver (js_eval.cc). Internal to libcelos/src/js.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "celos/hadoop.h"
#include "celos/schedule.h"
#include "celos/strategy.h"
#include "celos/trigger.h"
#include "celos/workflow.h"
#include "js/js_api.h"
#include "js/js_heap.h"

namespace celos::js {

// A C++ object made by a celos.* function. The JavaScript object handed to the script holds
// only a hidden index into FileScope::objects, so defineWorkflow gets the C++ object back and
// anything else (a plain object, an object of another kind) is rejected with a clear message.
using CelosObject =
    std::variant<std::shared_ptr<const Schedule>, std::shared_ptr<const SchedulingStrategy>,
                 TriggerPtr, ExternalServicePtr>;

// Where the last value was thrown: the innermost line in the workflow file, and the innermost
// script location anywhere (a defaults file, if the error happened in a helper defined there).
struct ThrowSite {
  int file_line = 0;
  std::string inner_file;
  int inner_line = 0;
};

struct FileScope {
  EvalSettings settings;  // a copy: properties functions may outlive the loader's options
  std::string file_name;
  std::weak_ptr<JsHeap> heap;
  std::vector<CelosObject> objects;
  std::vector<Workflow> workflows;
  std::vector<int> lines;
  std::vector<std::string> imported_defaults;
  // Set when a properties function must outlive the evaluation (it runs at submit time).
  bool keeps_heap = false;
  // False once the file has been evaluated: defineWorkflow and importDefaults are refused then.
  bool evaluating = true;
  int properties_functions = 0;
  ThrowSite last_throw;
  // celos.dataset declarations, in order (js_datasets.cc).
  std::vector<DatasetDeclaration> datasets;
  // celos.serviceLimits declarations, in order (js_service_limits.cc).
  std::vector<ServiceLimitDeclaration> service_limits;
};

// The scope of the heap `ctx` belongs to (kept in the global stash).
FileScope& scope_of(duk_context* ctx);

// Defines `celos`, the global `importDefaults` and the throw hook in the heap's global object,
// and links the heap to `scope`.
void install_api(duk_context* ctx, FileScope& scope);

// Where the script currently runs: the innermost line in the workflow file, and the innermost
// script location anywhere. Callable from inside a C function of the API.
ThrowSite current_site(duk_context* ctx, const std::string& file_name);

// celos.slurmExternalService (js_slurm.cc).
duk_ret_t slurm_external_service_js(duk_context* ctx);
// celos.kubernetesExternalService (js_kubernetes.cc).
duk_ret_t kubernetes_external_service_js(duk_context* ctx);
// Hands the script an external service object (js_api.cc).
void push_external_service(duk_context* ctx, ExternalServicePtr service);

// The Oozie service of celos.oozieExternalService (js_oozie.cc): the real one from
// celos/hadoop.h, wrapped so that a missing URL or HTTP client fails at submit time only.
ExternalServicePtr make_js_oozie_service(std::shared_ptr<HttpClient> http, std::string url,
                                         std::map<std::string, std::string> defaults,
                                         OoziePropertiesFunction properties, std::string user);

// Datasets (js_datasets.cc): celos.dataset, celos.statusTrigger, and the `inputs`, `outputs`
// and `atomicOutputs` fields of the defineWorkflow options at stack index 0.
duk_ret_t dataset_js(duk_context* ctx);
duk_ret_t status_trigger_js(duk_context* ctx);
void read_dataset_fields(duk_context* ctx, const char* fn, Workflow& workflow);
// Operator fields (js_operator.cc): retryDelaySeconds, retryBackoffFactor,
// maxRetryDelaySeconds and notify of the defineWorkflow options at stack index 0.
void read_operator_fields(duk_context* ctx, const char* fn, Workflow& workflow);
// Deadlines (js_deadline.cc): the deadline and onMiss fields (or the CELOS_DEFAULT_DEADLINE and
// CELOS_DEFAULT_ON_MISS globals of a defaults file) of the defineWorkflow options at index 0.
void read_deadline_fields(duk_context* ctx, const char* fn, Workflow& workflow);
// celos.serviceLimits (js_service_limits.cc).
duk_ret_t service_limits_js(duk_context* ctx);
// Hands the script a trigger object (js_api.cc).
void push_trigger(duk_context* ctx, TriggerPtr trigger);

}  // namespace celos::js
