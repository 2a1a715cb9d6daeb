// Datasets: time-indexed data that workflows produce and consume (SPEC §14, §16 "Datasets").
//
// A dataset is a family of instances: instance `T` lives at `path` with the time variables of
// `T` replaced, on the file system `fs` (as for hdfsCheckTrigger), and is complete when its
// `done_flag` file exists inside it. A workflow's `outputs` say which instances its slots write
// (slot `S` writes instance `S + offset`), its `inputs` which it reads (instance `slot + offset`
// in mode latest; every present instance not consumed yet in mode new).
//
// An instance is *present* when the workflow that outputs the dataset has SUCCESS at the
// instance's slot, or the instance was announced (POST /api/v1/datasets/{id}/instances), or,
// for a dataset no workflow outputs, its done flag exists. Presence answered from the state
// database costs no file system call.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "celos/error.h"
#include "celos/external_service.h"
#include "celos/time.h"
#include "celos/trigger.h"

namespace celos {

struct Dataset {
  std::string id;
  std::string path;  // with time variables
  std::string fs;    // file system URI ("" = the default one)
  std::string done_flag = "_SUCCESS";

  friend bool operator==(const Dataset&, const Dataset&) = default;

  // The path of instance `t` (time variables replaced).
  std::string instance_path(Time t) const;
  // The path of instance `t`'s done flag.
  std::string done_flag_path(Time t) const;
  // The times around `t` that its path may not tell apart from `t`: [start, end) of the period
  // of the finest time variable in the path (a path with ${year}${month}${day}: t's day). A path
  // without time variables: nothing (all times share it).
  std::optional<std::pair<Time, Time>> path_period(Time t) const;
};

enum class InputMode { kLatest, kNew };
std::string_view to_string(InputMode mode);

// One entry of a workflow's `inputs` or `outputs`: which dataset and how.
struct DatasetUse {
  std::string dataset;                  // the dataset id (resolved after all files are loaded)
  std::int64_t offset = 0;              // seconds
  InputMode mode = InputMode::kLatest;  // inputs only
  int min_instances = 1;                // mode new only

  friend bool operator==(const DatasetUse&, const DatasetUse&) = default;
};

// How long back mode new looks for instances that were not consumed yet.
inline constexpr std::chrono::hours kNewDataWindow{24 * 7};

// The `${inputs.<id>}` variable and the CELOS_INPUT_<ID> environment variable of a dataset id.
std::string input_variable_name(std::string_view dataset_id);
std::string input_env_name(std::string_view dataset_id);

// Large input lists (issue 33): Linux refuses an environment string or argument longer than
// 128 KiB ("Argument list too long"), so command and Slurm jobs get every list in a file of their
// job directory too, and a list longer than kInlineInputBytes only there.
inline constexpr std::size_t kInlineInputBytes = 65536;
// The inputs of a job whose directory is `job_dir`: for each `inputs.<id>` variable of
// `context` (paths joined by `,`), the file `<job_dir>/inputs.<id>` holds the paths one per line
// and is named by `${inputs.<id>.file}` and CELOS_INPUT_<ID>_FILE; a list longer than
// kInlineInputBytes becomes `@<that file>` in `${inputs.<id>}` and CELOS_INPUT_<ID>.
struct JobInputs {
  SubmitContext context;
  std::vector<std::pair<std::string, std::string>> files;  // path, content
};
JobInputs job_inputs(const SubmitContext& context, const std::string& job_dir);

// Replaces each `${name}` of `variables` in `text` (other `${...}` are left alone).
std::string replace_variables(std::string_view text,
                              const std::map<std::string, std::string>& variables);

// What the derived trigger needs to know about one input, resolved when the workflows are
// assembled (so the trigger never has to look the config up).
struct ResolvedInput {
  Dataset dataset;
  DatasetUse use;
  std::string consumer;                 // the workflow that reads it
  Time consumer_start_time{};           // mode new looks no earlier than this
  std::optional<std::string> producer;  // the workflow that outputs it, if any
  std::int64_t producer_offset = 0;     // instance T is the producer's slot T - offset
};

// The trigger of one input ("DatasetTrigger" in /trigger-status). Mode latest: ready when
// instance slot + offset is present. Mode new: ready when at least `min_instances` present
// instances in the window were not consumed by a SUCCESS slot of the consumer and are not held
// by a RUNNING one.
TriggerPtr make_dataset_trigger(ResolvedInput input);

// Ready when slot `T` of `workflow_id` is in one of `statuses` (a slot with nothing stored is
// WAITING). Type "StatusTrigger". `statuses` must be valid slot status names (the JS API checks).
TriggerPtr make_status_trigger(std::string workflow_id, std::vector<std::string> statuses);

// Presence of one instance (see the top of this file), with why, for triggers, the instance
// listing and lineage.
struct InstancePresence {
  bool present = false;
  bool announced = false;
  std::optional<SlotStatus> producer_status;  // the producer's slot status (WAITING if none)
  std::string why;                            // for descriptions
};
[[nodiscard]] Result<InstancePresence> instance_presence(const ResolvedInput& input, Time instance,
                                                         TriggerContext& context);

// Mode new: the present instances of `input` for slot `slot` that are new (oldest first).
// `held` are instances held by slots not yet visible to `context` (picks of the running step).
[[nodiscard]] Result<std::vector<Time>> new_instances(const ResolvedInput& input, Time slot,
                                                      TriggerContext& context,
                                                      const std::vector<Time>& held = {});

}  // namespace celos
