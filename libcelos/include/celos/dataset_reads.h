// What the API's dataset reads compute (SPEC §14, §16 "Datasets"), as plain values that web/
// renders as JSON: a dataset's instances in a range, the announcement check, and a slot's
// lineage (what it read and wrote, who produced its inputs and who read its outputs).
//
// Each call reads through one TriggerContext over `db` and `file_systems` at `now`: announced
// instances and stored slots are ranged reads cached for the call (one read of the
// announcements however many instances follow); file systems are asked every time.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "celos/dataset.h"
#include "celos/file_system.h"
#include "celos/slot.h"
#include "celos/state_db.h"
#include "celos/workflow.h"

namespace celos {

// ---- instances ---------------------------------------------------------------------------

struct DatasetInstance {
  Time time{};
  std::string path;
  bool present = false;
  bool announced = false;
};

// Newest first, at most `limit`; `truncated` when more instances were in the range.
struct InstancePage {
  std::vector<DatasetInstance> instances;
  bool truncated = false;
};

// The instances of `ds` in [start, end) worth listing: the producer's slots, announcements, and
// (no producer) the times its consumers look at.
[[nodiscard]] Result<InstancePage> dataset_instances(const WorkflowConfig& config,
                                                     const Dataset& ds, Time start, Time end,
                                                     std::size_t limit, Time now, StateDatabase& db,
                                                     FileSystemResolver& file_systems);

// May instance `time` of `ds` be announced? Two announced times with one path would hand that
// path to consumers twice (issue 33): kInvalid, naming both times and the path, when another
// announced instance has the same path, or when the path has no time variables at all.
// `accepted`: times of `ds` accepted but not stored yet (earlier in a group of announcements),
// counted as announced.
[[nodiscard]] Result<void> check_announcement(const Dataset& ds, Time time, StateDatabase& db,
                                              const std::vector<Time>& accepted = {});

// ---- lineage -----------------------------------------------------------------------------

// A slot of another workflow and its status (nullopt: the state database could not tell).
struct SlotRef {
  std::string workflow;
  Time time{};
  std::optional<SlotStatus> status;

  friend bool operator==(const SlotRef&, const SlotRef&) = default;
};

// One instance a slot reads: mode latest the instance at its offset, mode new the instances it
// consumed (or, before it ran, would consume now).
struct LineageInput {
  std::string dataset;
  Time time{};
  std::string path;
  bool present = false;
  std::optional<SlotRef> producer;  // the producer's slot, when celos runs the producer
};

// An output instance of a slot as found on its file system: whether it exists and is complete
// (its done flag is there).
struct OutputInstanceState {
  std::string dataset;
  Time time{};
  std::string path;
  bool exists = false;
  bool complete = false;
};

// The instance a slot writes, with a dry run of atomic output removal: `would_remove` when the
// workflow has atomic outputs and the instance exists without its done flag.
struct LineageOutput : OutputInstanceState {
  bool would_remove = false;
  std::vector<SlotRef> consumers;  // the slots that read this instance
};

struct SlotLineage {
  std::vector<LineageInput> inputs;
  std::vector<LineageOutput> outputs;
};

// kNotFound: `slot.workflow` is not a workflow of `config`, or `slot.time` not one of its slots
// (off its schedule or before its startTime).
[[nodiscard]] Result<SlotLineage> slot_lineage(const WorkflowConfig& config, const SlotId& slot,
                                               Time now, StateDatabase& db,
                                               FileSystemResolver& file_systems);

}  // namespace celos
