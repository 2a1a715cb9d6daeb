// Evaluates one workflow file in a heap of its own and turns what went wrong into a LoadError
// with a line of that file. Everything that touches Duktape runs inside duk_safe_call: an
// error outside a protected call would be fatal to the process.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/utf8.h"
#include "js/js_scope.h"

namespace celos::js {
namespace {

struct EvalJob {
  FileScope* scope;
  const std::string* source;
};

duk_ret_t run_file(duk_context* ctx, void* udata) {
  auto& job = *static_cast<EvalJob*>(udata);
  install_api(ctx, *job.scope);
  duk_push_lstring(ctx, job.source->data(), job.source->size());
  duk_push_string(ctx, job.scope->file_name.c_str());
  duk_compile(ctx, 0);
  duk_call(ctx, 0);
  return 0;
}

struct ErrorFacts {
  std::string text;       // String(error)
  bool is_error = false;  // an Error instance (not a thrown string or number)
  bool syntax = false;
  std::string file;  // the error's fileName, if any
  int line = 0;      // the error's lineNumber
};

std::chrono::milliseconds eval_time(const EvalSettings& settings) {
  return settings.load_time_limit ? std::min(*settings.load_time_limit, settings.max_eval_time)
                                  : settings.max_eval_time;
}

// Runs under duk_safe_call, so that reading the error's properties cannot be fatal.
duk_ret_t read_error(duk_context* ctx, void* udata) {
  auto& facts = *static_cast<ErrorFacts*>(udata);
  facts.is_error = duk_is_error(ctx, -1);
  if (facts.is_error) {
    facts.syntax = duk_get_error_code(ctx, -1) == DUK_ERR_SYNTAX_ERROR;
    duk_get_prop_string(ctx, -1, "fileName");
    if (const char* file = duk_get_string(ctx, -1)) facts.file = cesu8_to_utf8(file);
    duk_get_prop_string(ctx, -2, "lineNumber");
    facts.line = duk_get_int(ctx, -1);
    duk_pop_2(ctx);
  }
  facts.text = cesu8_to_utf8(duk_safe_to_string(ctx, -1));
  return 0;
}

LoadError describe_failure(JsHeap& heap, const FileScope& scope, const EvalSettings& settings) {
  duk_context* ctx = heap.context();
  ErrorFacts facts;
  // [error] -> the error stays below the safe call's arguments.
  duk_dup_top(ctx);
  if (duk_safe_call(ctx, read_error, &facts, 1, 1) != DUK_EXEC_SUCCESS)
    facts.text = "unknown error";
  duk_pop(ctx);

  LoadError error{scope.file_name, scope.last_throw.file_line, facts.text};
  if (facts.syntax && facts.file == scope.file_name) error.line = facts.line;
  if (error.line == 0 && facts.file == scope.file_name) error.line = facts.line;
  if (heap.timed_out() && heap.refused_allocation()) {
    error.message = fmt::format(
        "evaluation needs more than {} bytes of memory and did not finish within {} ms: {}",
        settings.max_heap_bytes, eval_time(settings).count(), facts.text);
  } else if (heap.timed_out()) {
    error.message = fmt::format("evaluation did not finish within {} ms (endless loop?): {}",
                                eval_time(settings).count(), facts.text);
  } else if (heap.refused_allocation()) {
    error.message = fmt::format("evaluation needs more than {} bytes of memory: {}",
                                settings.max_heap_bytes, facts.text);
  } else if (!facts.is_error) {
    error.message = "uncaught exception: " + facts.text;
  }
  const ThrowSite& site = scope.last_throw;
  if (!site.inner_file.empty() && site.inner_file != scope.file_name) {
    error.message += fmt::format(" (at {}:{})", site.inner_file, site.inner_line);
  }
  return error;
}

}  // namespace

FileEvaluation evaluate_workflow_file(const EvalSettings& settings, const std::string& file_name,
                                      const std::string& source) {
  FileEvaluation result;
  std::shared_ptr<JsHeap> heap = JsHeap::create(settings.max_heap_bytes);
  if (!heap) {
    result.errors.push_back(LoadError{
        file_name, 0,
        fmt::format("cannot create a JavaScript heap within {} bytes", settings.max_heap_bytes)});
    return result;
  }
  auto scope = std::make_shared<FileScope>();
  scope->settings = settings;
  scope->file_name = file_name;
  scope->heap = heap;
  heap->attach(scope);

  try {
    EvalJob job{scope.get(), &source};
    heap->arm(eval_time(settings));
    const duk_int_t rc = duk_safe_call(heap->context(), run_file, &job, 0, 1);
    if (rc != DUK_EXEC_SUCCESS) result.errors.push_back(describe_failure(*heap, *scope, settings));
    duk_pop(heap->context());
    heap->disarm();
  } catch (const std::exception& e) {
    // Duktape's fatal handler (js_heap.cc): the heap may be inconsistent, so it is abandoned
    // rather than destroyed; this does not happen with protected calls only.
    result.errors.push_back(LoadError{file_name, 0, e.what()});
    static_cast<void>(new std::shared_ptr<JsHeap>(heap));  // deliberately leaked
  }

  // The workflows leave the scope so that the services that keep the heap alive (properties
  // functions) do not form a cycle with it.
  scope->evaluating = false;
  result.workflows = std::move(scope->workflows);
  result.lines = std::move(scope->lines);
  result.imported_defaults = std::move(scope->imported_defaults);
  result.heap = heap;
  result.datasets = std::move(scope->datasets);
  result.service_limits = std::move(scope->service_limits);
  scope->workflows.clear();
  scope->objects.clear();
  return result;
}

}  // namespace celos::js
