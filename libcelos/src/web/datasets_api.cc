// The dataset routes (SPEC §14, §16 "Datasets"), only under /api/v1/:
//
//   GET  /datasets                              declared datasets, producers and consumers
//   POST /datasets/{id}/instances?time=T        announce an instance (operator, idempotent)
//   GET  /datasets/{id}/instances?start&end     instances and their presence, newest first
//   GET  /lineage?id=W&time=T                   what slot T of W read and wrote, and who read it
//
// Presence comes from the state database (the producer's slot, announcements); only datasets
// without a producer in celos cost a file system call (their done flag).
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api_params.h"
#include "celos/api.h"
#include "celos/dataset.h"
#include "model/dataset_step.h"

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

// Two announced times with one path would hand that path to consumers twice (issue 33): the
// announced instances in the period of the path's finest time variable must have other paths.
Result<void> check_path_tells_apart(const Dataset& ds, Time time, StateDatabase& db) {
  const std::string path = ds.instance_path(time);
  const auto period = ds.path_period(time);
  if (!period) {
    return fail(fmt::format("dataset \"{}\": its path {} has no time variables, so its announced "
                            "instances could not be told apart (consumers find it by its done "
                            "flag instead)", ds.id, ds.path), ErrorCode::kInvalid);
  }
  auto announced = db.announced_instances(ds.id, period->first, period->second);
  if (!announced) return tl::unexpected(announced.error());
  for (Time other : *announced) {
    if (other != time && ds.instance_path(other) == path) {
      return fail(fmt::format("dataset \"{}\": instance {} has the path {} of the announced "
                              "instance {} (the path {} does not tell them apart); announce {} "
                              "or add finer time variables to the path",
                              ds.id, format_time(time), path, format_time(other), ds.path,
                              format_time(other)), ErrorCode::kInvalid);
    }
  }
  return {};
}

HttpServerResponse post_instance(const Api& api, const HttpServerRequest& request) {
  const WorkflowConfigPtr config = api.scheduler().config();
  auto ds = dataset_param(*config, request);
  if (!ds) return error_response(ds.error());
  auto time = required_time_param(request, "time");
  if (!time) return error_response(time.error());
  if (floor_seconds(*time) != *time) {
    return json_error(400, "parameter time: instance times are whole seconds");
  }
  StateDatabase& db = api.scheduler().state_database();
  if (auto apart = check_path_tells_apart(**ds, *time, db); !apart) {
    return error_response(apart.error());
  }
  auto announced = db.announce_instance((*ds)->id, *time, api.now());
  if (!announced) return error_response(announced.error());
  spdlog::info("dataset {}: instance {} announced", (*ds)->id, format_time(*time));
  return json_response(
      json::object{{"dataset", (*ds)->id}, {"time", format_time(*time)}, {"present", true}});
}

// The slot times of `w` in [start, end) (never before its startTime), shifted by `shift`.
void add_shifted_times(const WorkflowConfig& config, const Workflow& w, std::int64_t shift,
                       Time start, Time end, std::set<Time>& out) {
  const std::chrono::seconds s(shift);
  const Time from = std::max<Time>(start - s, w.start_time);
  if (end - s <= from) return;
  auto times = w.schedule->times(from, end - s, config.schedule_context());
  if (!times) return;
  for (Time t : *times) out.insert(t + s);
}

// The instance times worth listing: the producer's slots, announcements (one ranged read,
// kept by `context` for the presence questions that follow), and (no producer) the times the
// consumers look at.
Result<std::set<Time>> instance_times(const WorkflowConfig& config, const Dataset& ds,
                                      TriggerContext& context, Time start, Time end) {
  std::set<Time> times;
  if (const Workflow* p = config.producer_of(ds.id)) {
    for (const DatasetUse& out : p->outputs) {
      if (out.dataset == ds.id) add_shifted_times(config, *p, out.offset, start, end, times);
    }
  } else {
    for (const Workflow* c : config.consumers_of(ds.id)) {
      for (const DatasetUse& in : c->inputs) {
        if (in.dataset == ds.id) add_shifted_times(config, *c, in.offset, start, end, times);
      }
    }
  }
  auto announced = context.announced_instances(ds.id, start, end);
  if (!announced) return tl::unexpected(announced.error());
  times.insert(announced->begin(), announced->end());
  return times;
}

ResolvedInput as_input(const WorkflowConfig& config, const Dataset& ds) {
  ResolvedInput input;
  input.dataset = ds;
  input.use.dataset = ds.id;
  if (const Workflow* p = config.producer_of(ds.id)) {
    input.producer = p->id;
    for (const DatasetUse& out : p->outputs) {
      if (out.dataset == ds.id) input.producer_offset = out.offset;
    }
  }
  return input;
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
  auto context = make_dataset_read_context(api.now(), scheduler.state_database(),
                                           scheduler.file_systems());
  auto times = instance_times(*config, **ds, *context, range->first, range->second);
  if (!times) return error_response(times.error());
  const ResolvedInput input = as_input(*config, **ds);
  json::array list;
  for (auto t = times->rbegin(); t != times->rend(); ++t) {
    if (list.size() == static_cast<std::size_t>(*limit)) break;
    auto presence = instance_presence(input, *t, *context);
    if (!presence) return error_response(presence.error());
    list.push_back(json::object{{"time", format_time(*t)},
                                {"path", (*ds)->instance_path(*t)},
                                {"present", presence->present},
                                {"announced", presence->announced}});
  }
  json::object answer{{"instances", std::move(list)}};
  const bool truncated = times->size() > static_cast<std::size_t>(*limit);
  answer["truncated"] = truncated;
  if (truncated) answer["next"] = answer["instances"].as_array().back().as_object().at("time");
  return json_response(answer);
}

// ---- lineage -----------------------------------------------------------------------------

json::value slot_ref(TriggerContext& context, const std::string& workflow, Time t) {
  auto status = context.slot_status(workflow, t);
  return json::object{{"workflow", workflow},
                      {"time", format_time(t)},
                      {"status", status ? std::string(to_string(*status)) : "UNKNOWN"}};
}

Result<json::array> lineage_inputs(const WorkflowConfig& config, const Workflow& w, Time slot,
                                   TriggerContext& context) {
  json::array out;
  auto stored = context.stored_slots(w.id, slot, slot + std::chrono::seconds(1));
  if (!stored) return tl::unexpected(stored.error());
  for (const DatasetUse& in : w.inputs) {
    auto input = config.resolve_input(w, in);
    if (!input) continue;
    std::vector<Time> instances{slot + std::chrono::seconds(in.offset)};
    if (in.mode == InputMode::kNew) {
      const auto* consumed = stored->empty() ? nullptr : &stored->front().consumed;
      if (consumed && consumed->count(in.dataset)) {
        instances = consumed->at(in.dataset);
      } else {
        auto candidates = new_instances(*input, slot, context);
        if (!candidates) return tl::unexpected(candidates.error());
        instances = *candidates;
      }
    }
    for (Time t : instances) {
      auto presence = instance_presence(*input, t, context);
      if (!presence) return tl::unexpected(presence.error());
      json::value producer = nullptr;
      if (input->producer) {
        producer = slot_ref(context, *input->producer,
                            t - std::chrono::seconds(input->producer_offset));
      }
      out.push_back(json::object{{"dataset", in.dataset},
                                 {"time", format_time(t)},
                                 {"path", input->dataset.instance_path(t)},
                                 {"present", presence->present},
                                 {"producer", std::move(producer)}});
    }
  }
  return out;
}

// The slots that read instance `t` of `dataset`.
Result<json::array> consumers_of_instance(const WorkflowConfig& config, const std::string& dataset,
                                          Time t, TriggerContext& context) {
  json::array out;
  for (const Workflow* c : config.consumers_of(dataset)) {
    for (const DatasetUse& in : c->inputs) {
      if (in.dataset != dataset) continue;
      const Time slot = t - std::chrono::seconds(in.offset);
      if (in.mode == InputMode::kLatest) {
        auto is_slot = is_slot_time(*c->schedule, slot, config.schedule_context());
        if (is_slot && *is_slot && slot >= c->start_time) out.push_back(slot_ref(context, c->id, slot));
        continue;
      }
      auto slots = context.stored_slots(c->id, slot, slot + kNewDataWindow + std::chrono::seconds(1));
      if (!slots) return tl::unexpected(slots.error());
      for (const SlotState& s : *slots) {
        auto it = s.consumed.find(dataset);
        if (it != s.consumed.end() && std::count(it->second.begin(), it->second.end(), t)) {
          out.push_back(json::object{{"workflow", c->id},
                                     {"time", format_time(s.id.time)},
                                     {"status", std::string(to_string(s.status))}});
        }
      }
    }
  }
  return out;
}

Result<json::array> lineage_outputs(const WorkflowConfig& config, const Workflow& w, Time slot,
                                    TriggerContext& context, FileSystemResolver& file_systems) {
  json::array out;
  for (const DatasetUse& o : w.outputs) {
    auto ds = config.datasets.find(o.dataset);
    if (ds == config.datasets.end()) continue;
    const Time t = output_instance(o, slot);
    auto state = inspect_output(ds->second, t, file_systems);
    if (!state) return tl::unexpected(state.error());
    auto consumers = consumers_of_instance(config, o.dataset, t, context);
    if (!consumers) return tl::unexpected(consumers.error());
    out.push_back(json::object{{"dataset", o.dataset},
                               {"time", format_time(t)},
                               {"path", state->path},
                               {"exists", state->exists},
                               {"complete", state->complete},
                               {"wouldRemove", w.atomic_outputs && state->exists && !state->complete},
                               {"consumers", std::move(*consumers)}});
  }
  return out;
}

HttpServerResponse get_lineage(const Api& api, const HttpServerRequest& request) {
  auto id = slot_params(request);
  if (!id) return error_response(id.error());
  const WorkflowConfigPtr config = api.scheduler().config();
  const Workflow* w = config->find(id->workflow);
  if (!w) return json_error(404, fmt::format("unknown workflow \"{}\"", id->workflow));
  auto is_slot = is_slot_time(*w->schedule, id->time, config->schedule_context());
  if (!is_slot || !*is_slot || id->time < w->start_time) {
    return json_error(404, fmt::format("{} is not a slot of workflow \"{}\"",
                                       format_time(id->time), id->workflow));
  }
  Scheduler& scheduler = api.scheduler();
  auto context = make_dataset_read_context(api.now(), scheduler.state_database(),
                                           scheduler.file_systems());
  auto inputs = lineage_inputs(*config, *w, id->time, *context);
  if (!inputs) return error_response(inputs.error());
  auto outputs = lineage_outputs(*config, *w, id->time, *context, scheduler.file_systems());
  if (!outputs) return error_response(outputs.error());
  return json_response(json::object{{"inputs", std::move(*inputs)}, {"outputs", std::move(*outputs)}});
}

template <class F>
RouteHandler bind(const Api& api, F f) {
  if constexpr (std::is_invocable_v<F, const Api&, const HttpServerRequest&>) {
    return [&api, f](const HttpServerRequest& request) { return f(api, request); };
  } else {
    return [&api, f](const HttpServerRequest&) { return f(api); };
  }
}

RouteParam dataset_id() {
  return {.name = "id", .in = ParamIn::kPath, .required = true, .description = "the dataset's id"};
}
RouteParam time_param(std::string name, bool required, std::string description) {
  return {.name = std::move(name), .format = "date-time", .required = required,
          .description = std::move(description)};
}

}  // namespace

void register_dataset_routes(RouteTable& table, const Api& api) {
  table.add({.method = "GET", .path = "/datasets",
             .summary = "The declared datasets with their producers and consumers",
             .response_schema = R"({"type":"object","properties":{"datasets":{"type":"array",)"
                                R"("items":{"type":"object"}}}})",
             .handler = bind(api, get_datasets)});
  table.add({.method = "POST", .path = "/datasets/{id}/instances", .role = Role::kOperator,
             .mutates = true, .summary = "Announce that an instance of a dataset is present",
             .params = {dataset_id(), time_param("time", true, "the instance's time")},
             .response_schema = R"({"type":"object","properties":{"dataset":{"type":"string"},)"
                                R"("time":{"type":"string"},"present":{"type":"boolean"}}})",
             .handler = bind(api, post_instance)});
  table.add({.method = "GET", .path = "/datasets/{id}/instances",
             .summary = "A dataset's instances in a range (at most 7 days), newest first",
             .params = {dataset_id(),
                        time_param("start", false, "start of the range (default: end - 7 days)"),
                        time_param("end", false, "end of the range, exclusive (default: now)"),
                        {.name = "limit", .type = "integer",
                         .description = "at most this many instances, 1-10000 (default 1000)"}},
             .response_schema = R"({"type":"object","properties":{"instances":{"type":"array",)"
                                R"("items":{"type":"object"}},"truncated":{"type":"boolean"},)"
                                R"("next":{"type":"string"}}})",
             .handler = bind(api, get_instances)});
  table.add({.method = "GET", .path = "/lineage",
             .summary = "What a slot read and wrote, who produced its inputs and who read its "
                        "outputs (with a dry run of atomic output removal)",
             .params = {{.name = "id", .required = true, .description = "the workflow's id"},
                        time_param("time", true, "the slot's time")},
             .response_schema = R"({"type":"object","properties":{"inputs":{"type":"array",)"
                                R"("items":{"type":"object"}},"outputs":{"type":"array",)"
                                R"("items":{"type":"object"}}}})",
             .handler = bind(api, get_lineage)});
}

}  // namespace celos
