// The dataset routes (SPEC §14, §16 "Datasets"), only under /api/v1/:
//
//   GET  /datasets                              declared datasets, producers and consumers
//   POST /datasets/{id}/instances?time=T        announce an instance (operator, idempotent)
//   GET  /datasets/{id}/instances?start&end     instances and their presence, newest first
//   GET  /lineage?id=W&time=T                   what slot T of W read and wrote, and who read it
//
// What each answer holds is computed in model/ (celos/dataset_reads.h); this file renders JSON.

#include <map>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api_params.h"
#include "celos/api.h"
#include "celos/dataset.h"
#include "celos/dataset_reads.h"
#include "route_binding.h"

namespace celos {
namespace {

namespace json = boost::json;

// The listing's cap (docs/http-api.md): a page of at most kMaxInstances instances.
constexpr long long kDefaultInstances = 1000;
constexpr long long kMaxInstances = 10000;

json::array ids(const std::vector<const Workflow*>& workflows) {
  json::array out;
  for (const Workflow* w : workflows) out.emplace_back(w->id);
  return out;
}

HttpServerResponse get_datasets(const Api& api) {
  const WorkflowConfigPtr config = api.scheduler().config();
  json::array list;
  for (const auto& [id, ds] : config->datasets) {
    json::array producers;
    if (const Workflow* p = config->producer_of(id)) producers.emplace_back(p->id);
    list.push_back(json::object{{"id", id},
                                {"path", ds.path},
                                {"fs", ds.fs},
                                {"doneFlag", ds.done_flag},
                                {"producers", std::move(producers)},
                                {"consumers", ids(config->consumers_of(id))}});
  }
  return json_response(json::object{{"datasets", std::move(list)}});
}

Result<const Dataset*> dataset_param(const WorkflowConfig& config, const HttpServerRequest& r) {
  auto it = r.path_params.find("id");
  if (it == r.path_params.end()) return fail("missing dataset id", ErrorCode::kInvalid);
  auto ds = config.datasets.find(it->second);
  if (ds == config.datasets.end()) {
    return fail(fmt::format("unknown dataset \"{}\"", it->second), ErrorCode::kNotFound);
  }
  return &ds->second;
}

// The dataset and time of an announcement, checked against the stored announcements and the
// ones of its group accepted before it (`accepted`: by dataset).
Result<StateDatabase::Announcement> checked_announcement(
    const WorkflowConfig& config, const HttpServerRequest& request, StateDatabase& db,
    const std::map<std::string, std::vector<Time>>& accepted) {
  auto ds = dataset_param(config, request);
  if (!ds) return tl::unexpected(ds.error());
  auto time = required_time_param(request, "time");
  if (!time) return tl::unexpected(time.error());
  if (floor_seconds(*time) != *time) {
    return fail("parameter time: instance times are whole seconds", ErrorCode::kInvalid);
  }
  const auto group = accepted.find((*ds)->id);
  const std::vector<Time> none;
  if (auto apart =
          check_announcement(**ds, *time, db, group == accepted.end() ? none : group->second);
      !apart) {
    return tl::unexpected(apart.error());
  }
  return StateDatabase::Announcement{(*ds)->id, *time};
}

// POST /datasets/{id}/instances, for the requests that waited for the worker together: each is
// checked, the accepted ones are stored in one write and their consumers stepped at once
// (issue 28; the periodic step remains the safety net).
std::vector<HttpServerResponse> post_instances(const Api& api,
                                               const std::vector<HttpServerRequest>& requests) {
  const WorkflowConfigPtr config = api.scheduler().config();
  StateDatabase& db = api.scheduler().state_database();
  std::vector<HttpServerResponse> out(requests.size());
  std::vector<StateDatabase::Announcement> writes;
  std::vector<std::size_t> written;  // the request of each write
  std::map<std::string, std::vector<Time>> accepted;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    auto announcement = checked_announcement(*config, requests[i], db, accepted);
    if (!announcement) {
      out[i] = error_response(announcement.error());
      continue;
    }
    accepted[announcement->dataset].push_back(announcement->time);
    writes.push_back(std::move(*announcement));
    written.push_back(i);
  }
  if (auto stored = db.announce_instances(writes, api.now()); !stored) {
    for (std::size_t i : written) out[i] = error_response(stored.error());
    return out;
  }
  std::set<std::string> consumers;
  for (std::size_t k = 0; k < writes.size(); ++k) {
    const auto& [dataset, time] = writes[k];
    spdlog::info("dataset {}: instance {} announced", dataset, format_time(time));
    for (const Workflow* consumer : config->consumers_of(dataset)) consumers.insert(consumer->id);
    out[written[k]] = json_response(
        json::object{{"dataset", dataset}, {"time", format_time(time)}, {"present", true}});
  }
  api.post_event(EventSource::kAnnouncement, {consumers.begin(), consumers.end()});
  return out;
}

// Newest first, at most `limit` (default kDefaultInstances): a cut answer says so with
// "truncated" and names in "next" the `end` of the next page (the oldest time listed).
HttpServerResponse get_instances(const Api& api, const HttpServerRequest& request) {
  const WorkflowConfigPtr config = api.scheduler().config();
  auto ds = dataset_param(*config, request);
  if (!ds) return error_response(ds.error());
  auto range = slot_range(request, api.now());
  if (!range) return error_response(range.error());
  auto limit = int_param(request, "limit", kDefaultInstances, 1, kMaxInstances);
  if (!limit) return error_response(limit.error());
  Scheduler& scheduler = api.scheduler();
  auto page = dataset_instances(*config, **ds, range->first, range->second,
                                static_cast<std::size_t>(*limit), api.now(),
                                scheduler.state_database(), scheduler.file_systems());
  if (!page) return error_response(page.error());
  json::array list;
  for (const DatasetInstance& i : page->instances) {
    list.push_back(json::object{{"time", format_time(i.time)},
                                {"path", i.path},
                                {"present", i.present},
                                {"announced", i.announced}});
  }
  json::object answer{{"instances", std::move(list)}};
  answer["truncated"] = page->truncated;
  if (page->truncated) answer["next"] = format_time(page->instances.back().time);
  return json_response(answer);
}

// ---- lineage -----------------------------------------------------------------------------

json::value slot_ref_json(const SlotRef& ref) {
  return json::object{{"workflow", ref.workflow},
                      {"time", format_time(ref.time)},
                      {"status", ref.status ? std::string(to_string(*ref.status)) : "UNKNOWN"}};
}

json::object input_json(const LineageInput& in) {
  return json::object{
      {"dataset", in.dataset},
      {"time", format_time(in.time)},
      {"path", in.path},
      {"present", in.present},
      {"producer", in.producer ? slot_ref_json(*in.producer) : json::value(nullptr)}};
}

json::object output_json(const LineageOutput& out) {
  json::array consumers;
  for (const SlotRef& c : out.consumers) consumers.push_back(slot_ref_json(c));
  return json::object{{"dataset", out.dataset},
                      {"time", format_time(out.time)},
                      {"path", out.path},
                      {"exists", out.exists},
                      {"complete", out.complete},
                      {"wouldRemove", out.would_remove},
                      {"consumers", std::move(consumers)}};
}

HttpServerResponse get_lineage(const Api& api, const HttpServerRequest& request) {
  auto id = slot_params(request);
  if (!id) return error_response(id.error());
  Scheduler& scheduler = api.scheduler();
  auto lineage = slot_lineage(*scheduler.config(), *id, api.now(), scheduler.state_database(),
                              scheduler.file_systems());
  if (!lineage) return error_response(lineage.error());
  json::array inputs, outputs;
  for (const LineageInput& in : lineage->inputs) inputs.push_back(input_json(in));
  for (const LineageOutput& out : lineage->outputs) outputs.push_back(output_json(out));
  return json_response(
      json::object{{"inputs", std::move(inputs)}, {"outputs", std::move(outputs)}});
}

RouteParam dataset_id() {
  return {.name = "id", .in = ParamIn::kPath, .required = true, .description = "the dataset's id"};
}

}  // namespace

void register_dataset_routes(RouteTable& table, const Api& api) {
  table.add({.method = "GET",
             .path = "/datasets",
             .summary = "The declared datasets with their producers and consumers",
             .response_schema = R"({"type":"object","properties":{"datasets":{"type":"array",)"
                                R"("items":{"type":"object"}}}})",
             .handler = bind_api(api, get_datasets)});
  table.add({.method = "POST",
             .path = "/datasets/{id}/instances",
             .role = Role::kOperator,
             .mutates = true,
             .summary = "Announce that an instance of a dataset is present",
             .params = {dataset_id(), time_route_param("time", true, "the instance's time")},
             .response_schema = R"({"type":"object","properties":{"dataset":{"type":"string"},)"
                                R"("time":{"type":"string"},"present":{"type":"boolean"}}})",
             .handler = [&api](const HttpServerRequest& r) { return post_instances(api, {r})[0]; },
             .group_handler =
                 [&api](const std::vector<HttpServerRequest>& group) {
                   return post_instances(api, group);
                 }});
  table.add(
      {.method = "GET",
       .path = "/datasets/{id}/instances",
       .summary = "A dataset's instances in a range (at most 7 days), newest first",
       .params = {dataset_id(),
                  time_route_param("start", false, "start of the range (default: end - 7 days)"),
                  time_route_param("end", false, "end of the range, exclusive (default: now)"),
                  {.name = "limit",
                   .type = "integer",
                   .description = "at most this many instances, 1-10000 (default 1000)"}},
       .response_schema = R"({"type":"object","properties":{"instances":{"type":"array",)"
                          R"("items":{"type":"object"}},"truncated":{"type":"boolean"},)"
                          R"("next":{"type":"string"}}})",
       .handler = bind_api(api, get_instances)});
  table.add({.method = "GET",
             .path = "/lineage",
             .summary = "What a slot read and wrote, who produced its inputs and who read its "
                        "outputs (with a dry run of atomic output removal)",
             .params = {{.name = "id", .required = true, .description = "the workflow's id"},
                        time_route_param("time", true, "the slot's time")},
             .response_schema = R"({"type":"object","properties":{"inputs":{"type":"array",)"
                                R"("items":{"type":"object"}},"outputs":{"type":"array",)"
                                R"("items":{"type":"object"}}}})",
             .handler = bind_api(api, get_lineage)});
}

}  // namespace celos
