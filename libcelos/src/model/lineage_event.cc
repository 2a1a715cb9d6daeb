// The OpenLineage RunEvent of a slot change (celos/lineage.h): which changes emit which event,
// and the event's JSON. Pure functions of the change and the workflows.
#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/auth.h"
#include "celos/dataset.h"
#include "celos/lineage.h"

namespace celos {
namespace json = boost::json;
namespace {

constexpr std::string_view kNominalTimeSchema =
    "https://openlineage.io/spec/facets/1-0-1/NominalTimeRunFacet.json#/$defs/NominalTimeRunFacet";
constexpr std::string_view kErrorMessageSchema =
    "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/"
    "ErrorMessageRunFacet";
constexpr std::string_view kParentSchema =
    "https://openlineage.io/spec/facets/1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet";
constexpr std::string_view kJobTypeSchema =
    "https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet";

// START when an attempt is recorded RUNNING; its end when it leaves RUNNING.
std::optional<std::pair<std::string, std::string>> event_of(const SlotChange& change) {
  const SlotState& to = change.to;
  const std::optional<SlotState>& from = change.from;
  if (to.status == SlotStatus::kRunning && to.run_id &&
      !(from && from->status == SlotStatus::kRunning && from->run_id == to.run_id)) {
    return std::pair{*to.run_id, std::string("START")};
  }
  if (!from || from->status != SlotStatus::kRunning || !from->run_id) return std::nullopt;
  if (to.status == SlotStatus::kRunning && to.run_id == from->run_id) return std::nullopt;
  switch (to.status) {
    case SlotStatus::kSuccess:
      return std::pair{*from->run_id, std::string("COMPLETE")};
    case SlotStatus::kKilled:
      return std::pair{*from->run_id, std::string("ABORT")};
    default:  // FAILURE, or WAITING for a retry
      return std::pair{*from->run_id, std::string("FAIL")};
  }
}

// The attempt an event is of: the RUNNING side of its change.
const SlotState& attempt_of(const SlotChange& change) {
  return change.to.status == SlotStatus::kRunning ? change.to : *change.from;
}

json::object facet(std::string_view schema, const LineageOptions& options) {
  json::object f;
  f["_producer"] = options.producer;
  f["_schemaURL"] = schema;
  return f;
}

// The schedule's first slot after `t` (nominalEndTime), looking up to a year ahead.
std::optional<Time> next_slot(const Workflow& wf, const WorkflowConfig& config, Time t) {
  if (!wf.schedule) return std::nullopt;
  const ScheduleContext context = config.schedule_context();
  for (auto ahead :
       {std::chrono::hours(2), std::chrono::hours(24 * 32), std::chrono::hours(24 * 400)}) {
    auto times = wf.schedule->times(t + std::chrono::seconds(1), t + ahead, context);
    if (!times) return std::nullopt;
    if (!times->empty()) return times->front();
  }
  return std::nullopt;
}

json::object dataset_of(const Dataset& ds, Time instance, const LineageOptions& options) {
  json::object d;
  d["namespace"] = lineage_dataset_namespace(ds.fs, options);
  d["name"] = ds.instance_path(instance);
  return d;
}

// Inputs: each input's instance at slot + offset, or, in mode new, the instances the attempt
// was handed. Outputs: each output's instance at slot + offset.
std::pair<json::array, json::array> datasets_of(const SlotChange& change, const Workflow& wf,
                                                const WorkflowConfig& config,
                                                const LineageOptions& options) {
  const SlotState& attempt = attempt_of(change);
  const Time slot = attempt.id.time;
  json::array inputs, outputs;
  for (const DatasetUse& use : wf.inputs) {
    auto ds = config.datasets.find(use.dataset);
    if (ds == config.datasets.end()) continue;
    if (use.mode == InputMode::kNew) {
      auto handed = attempt.consumed.find(use.dataset);
      if (handed == attempt.consumed.end()) continue;
      for (Time t : handed->second) inputs.emplace_back(dataset_of(ds->second, t, options));
    } else {
      inputs.emplace_back(dataset_of(ds->second, slot + std::chrono::seconds(use.offset), options));
    }
  }
  for (const DatasetUse& use : wf.outputs) {
    auto ds = config.datasets.find(use.dataset);
    if (ds == config.datasets.end()) continue;
    outputs.emplace_back(dataset_of(ds->second, slot + std::chrono::seconds(use.offset), options));
  }
  return {std::move(inputs), std::move(outputs)};
}

json::object run_facets(const SlotChange& change, const std::string& type, const Workflow* wf,
                        const WorkflowConfig& config, const LineageOptions& options) {
  const Time slot = change.to.id.time;
  json::object facets;
  json::object nominal = facet(kNominalTimeSchema, options);
  nominal["nominalStartTime"] = format_time(slot);
  if (wf) {
    if (auto next = next_slot(*wf, config, slot)) nominal["nominalEndTime"] = format_time(*next);
  }
  facets["nominalTime"] = std::move(nominal);
  if (type == "FAIL") {
    json::object error = facet(kErrorMessageSchema, options);
    error["message"] = change.to.message.value_or(
        fmt::format("job {} failed", change.from->external_id.value_or("(no external id)")));
    error["programmingLanguage"] = "celos";
    facets["errorMessage"] = std::move(error);
  }
  if (const std::optional<std::string>& plan = attempt_of(change).backfill) {
    json::object parent = facet(kParentSchema, options);
    parent["job"] =
        json::object{{"namespace", options.job_namespace}, {"name", "backfill/" + *plan}};
    parent["run"] = json::object{{"runId", backfill_run_id(options.job_namespace, *plan)}};
    facets["parent"] = std::move(parent);
  }
  return facets;
}

json::object job_of(const SlotChange& change, const LineageOptions& options) {
  json::object job;
  job["namespace"] = options.job_namespace;
  job["name"] = change.to.id.workflow;
  json::object type = facet(kJobTypeSchema, options);
  type["processingType"] = "BATCH";
  type["integration"] = "CELOS";
  type["jobType"] = "WORKFLOW";
  job["facets"] = json::object{{"jobType", std::move(type)}};
  return job;
}

}  // namespace

std::string backfill_run_id(std::string_view job_namespace, std::string_view plan) {
  // The namespace's length first, so that ("a/b", "c") and ("a", "b/c") differ.
  Sha256 h =
      sha256(fmt::format("celos backfill {}:{}/{}", job_namespace.size(), job_namespace, plan));
  h[6] = static_cast<std::uint8_t>((h[6] & 0x0F) | 0x80);  // version 8
  h[8] = static_cast<std::uint8_t>((h[8] & 0x3F) | 0x80);  // variant 10
  const std::string hex = to_hex(h);
  return fmt::format("{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                     hex.substr(16, 4), hex.substr(20, 12));
}

std::string lineage_dataset_namespace(std::string_view fs, const LineageOptions& options) {
  std::string_view uri = fs.empty() ? std::string_view(options.default_fs) : fs;
  const auto colon = uri.find("://");
  std::string scheme = colon == std::string_view::npos ? std::string(uri.substr(0, uri.find(':')))
                                                       : std::string(uri.substr(0, colon));
  std::string_view authority;
  if (colon != std::string_view::npos) {
    authority = uri.substr(colon + 3);
    authority = authority.substr(0, authority.find('/'));
  }
  if (scheme == "webhdfs" || scheme == "swebhdfs") scheme = "hdfs";
  if (scheme.empty()) scheme = "file";
  if (authority.empty()) return fmt::format("{}://{}", scheme, options.host);
  return fmt::format("{}://{}", scheme, authority);
}

std::optional<LineageEvent> lineage_event(const SlotChange& change, const WorkflowConfig& config,
                                          const LineageOptions& options) {
  auto kind = event_of(change);
  if (!kind) return std::nullopt;
  const auto& [run_id, type] = *kind;
  const Workflow* wf = config.find(change.to.id.workflow);
  json::object event;
  event["eventType"] = type;
  event["eventTime"] = format_time(change.at);
  event["producer"] = options.producer;
  event["schemaURL"] = kOpenLineageSchemaUrl;
  event["run"] =
      json::object{{"runId", run_id}, {"facets", run_facets(change, type, wf, config, options)}};
  event["job"] = job_of(change, options);
  auto [inputs, outputs] =
      wf ? datasets_of(change, *wf, config, options) : std::pair<json::array, json::array>{};
  event["inputs"] = std::move(inputs);
  event["outputs"] = std::move(outputs);
  return LineageEvent{run_id, type, change.to.id, json::serialize(event)};
}

}  // namespace celos
