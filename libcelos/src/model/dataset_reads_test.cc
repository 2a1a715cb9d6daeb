// The API's dataset reads as values (celos/dataset_reads.h): a slot's lineage (inputs with their
// producers, outputs with their consumers and the dry run of atomic removal), the instance
// listing's pages, the announcement check.
#include "celos/dataset_reads.h"

#include <catch2/catch.hpp>

#include "celos/state_db_open.h"
#include "testing/fakes.h"

using namespace celos;
using celos::testing::FakeExternalService;
using celos::testing::FakeFileSystemResolver;
using celos::testing::MemFileSystem;
using std::chrono::hours;

namespace {

const Time kDatasetReadsStart = make_time(2015, 9, 13);
const Time kNow = kDatasetReadsStart + hours(12);

// "imp" writes "raw" hourly; "clean" reads the latest "raw"; "roll" reads new "raw" instances.
struct DatasetReadsWorld {
  std::shared_ptr<MemFileSystem> data_fs = std::make_shared<MemFileSystem>();
  std::unique_ptr<StateDatabase> db =
      make_file_state_database(std::make_shared<MemFileSystem>(), "/db");
  FakeFileSystemResolver file_systems{data_fs};
  WorkflowConfig config;

  DatasetReadsWorld() {
    add("imp").outputs = {{"raw", 0}};
    add("clean").inputs = {{"raw", 0}};
    add("roll").inputs = {{"raw", 0, InputMode::kNew, 1}};
    link_datasets(config, {{Dataset{"raw", "/raw/${year}${month}${day}/${hour}", "", "_SUCCESS"},
                            "raw.js", 1}});
    REQUIRE(config.errors.empty());
  }
  Workflow& add(const std::string& id) {
    Workflow w;
    w.id = id;
    w.schedule = make_hourly_schedule();
    w.strategy = make_serial_strategy(1);
    w.service = std::make_shared<FakeExternalService>();
    w.start_time = kDatasetReadsStart;
    return config.workflows[id] = w;
  }
  void put(SlotState state) {
    auto stored = db->put_slots({std::move(state)});
    REQUIRE(stored);
  }
  SlotLineage lineage(const std::string& workflow, Time t) {
    auto answer = slot_lineage(config, {workflow, t}, kNow, *db, file_systems);
    REQUIRE(answer);
    return *answer;
  }
};

}  // namespace

TEST_CASE("lineage names the producer's slot of each input and whether it is present") {
  DatasetReadsWorld w;
  w.put(SlotState::of({"imp", kDatasetReadsStart + hours(2)}, SlotStatus::kSuccess, "job"));
  const SlotLineage lineage = w.lineage("clean", kDatasetReadsStart + hours(2));
  REQUIRE(lineage.inputs.size() == 1);
  const LineageInput& in = lineage.inputs[0];
  CHECK(in.dataset == "raw");
  CHECK(in.time == kDatasetReadsStart + hours(2));
  CHECK(in.path == "/raw/20150913/02");
  CHECK(in.present);
  CHECK(in.producer == SlotRef{"imp", kDatasetReadsStart + hours(2), SlotStatus::kSuccess});
  CHECK(lineage.outputs.empty());
  // Not produced yet: absent, the producer's slot waiting.
  const LineageInput later = w.lineage("clean", kDatasetReadsStart + hours(3)).inputs.at(0);
  CHECK_FALSE(later.present);
  CHECK(later.producer == SlotRef{"imp", kDatasetReadsStart + hours(3), SlotStatus::kWaiting});
}

TEST_CASE("lineage of mode new lists the instances the slot consumed, else those it would") {
  DatasetReadsWorld w;
  for (int h = 0; h < 3; ++h) {
    w.put(SlotState::of({"imp", kDatasetReadsStart + hours(h)}, SlotStatus::kSuccess, "job"));
  }
  auto times = [](const SlotLineage& l) {
    std::vector<Time> out;
    for (const LineageInput& in : l.inputs) out.push_back(in.time);
    return out;
  };
  // Nothing stored for the slot: the three present instances it would take now.
  CHECK(times(w.lineage("roll", kDatasetReadsStart + hours(2))) ==
        std::vector<Time>{kDatasetReadsStart, kDatasetReadsStart + hours(1),
                          kDatasetReadsStart + hours(2)});
  // Its record says what it consumed.
  SlotState ran =
      SlotState::of({"roll", kDatasetReadsStart + hours(2)}, SlotStatus::kSuccess, "job");
  ran.consumed["raw"] = {kDatasetReadsStart + hours(1)};
  w.put(ran);
  CHECK(times(w.lineage("roll", kDatasetReadsStart + hours(2))) ==
        std::vector<Time>{kDatasetReadsStart + hours(1)});
}

TEST_CASE("lineage of an output: its state on disk, the dry run and who read it") {
  DatasetReadsWorld w;
  SlotState ran =
      SlotState::of({"roll", kDatasetReadsStart + hours(4)}, SlotStatus::kSuccess, "job");
  ran.consumed["raw"] = {kDatasetReadsStart + hours(1)};
  w.put(ran);
  REQUIRE(w.data_fs->make_dirs("/raw/20150913/01"));  // no done flag: incomplete
  SlotLineage lineage = w.lineage("imp", kDatasetReadsStart + hours(1));
  REQUIRE(lineage.outputs.size() == 1);
  LineageOutput out = lineage.outputs[0];
  CHECK(out.path == "/raw/20150913/01");
  CHECK(out.exists);
  CHECK_FALSE(out.complete);
  CHECK(out.would_remove);
  CHECK(out.consumers ==
        std::vector<SlotRef>{{"clean", kDatasetReadsStart + hours(1), SlotStatus::kWaiting},
                             {"roll", kDatasetReadsStart + hours(4), SlotStatus::kSuccess}});
  // Complete: nothing to remove; without atomic outputs never.
  REQUIRE(w.data_fs->write_files({{"/raw/20150913/01/_SUCCESS", ""}}));
  out = w.lineage("imp", kDatasetReadsStart + hours(1)).outputs.at(0);
  CHECK(out.complete);
  CHECK_FALSE(out.would_remove);
  w.config.workflows["imp"].atomic_outputs = false;
  REQUIRE(w.data_fs->remove("/raw/20150913/01/_SUCCESS"));
  CHECK_FALSE(w.lineage("imp", kDatasetReadsStart + hours(1)).outputs.at(0).would_remove);
}

TEST_CASE("lineage of an unknown workflow or of a time that is no slot is not found") {
  DatasetReadsWorld w;
  auto unknown = slot_lineage(w.config, {"nope", kDatasetReadsStart}, kNow, *w.db, w.file_systems);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code == ErrorCode::kNotFound);
  CHECK(unknown.error().message == "unknown workflow \"nope\"");
  auto off = slot_lineage(w.config, {"imp", kDatasetReadsStart + std::chrono::minutes(30)}, kNow,
                          *w.db, w.file_systems);
  REQUIRE_FALSE(off);
  CHECK(off.error().code == ErrorCode::kNotFound);
  CHECK(off.error().message == "2015-09-13T00:30:00.000Z is not a slot of workflow \"imp\"");
  auto before =
      slot_lineage(w.config, {"imp", kDatasetReadsStart - hours(1)}, kNow, *w.db, w.file_systems);
  REQUIRE_FALSE(before);
  CHECK(before.error().code == ErrorCode::kNotFound);
}

TEST_CASE("a dataset's instances: the producer's slots and announcements, newest first, paged") {
  DatasetReadsWorld w;
  w.put(SlotState::of({"imp", kDatasetReadsStart + hours(1)}, SlotStatus::kSuccess, "job"));
  REQUIRE(w.db->announce_instance("raw", kDatasetReadsStart + hours(30),
                                  kDatasetReadsStart));  // beyond the slots
  const Dataset& raw = w.config.datasets.at("raw");
  auto page = dataset_instances(w.config, raw, kDatasetReadsStart, kDatasetReadsStart + hours(48),
                                3, kNow, *w.db, w.file_systems);
  REQUIRE(page);
  REQUIRE(page->instances.size() == 3);
  CHECK(page->truncated);
  CHECK(page->instances[0].time == kDatasetReadsStart + hours(47));
  CHECK_FALSE(page->instances[0].present);
  auto all = dataset_instances(w.config, raw, kDatasetReadsStart, kDatasetReadsStart + hours(3), 10,
                               kNow, *w.db, w.file_systems);
  REQUIRE(all);
  CHECK_FALSE(all->truncated);
  REQUIRE(all->instances.size() == 3);
  CHECK(all->instances[1].time == kDatasetReadsStart + hours(1));
  CHECK(all->instances[1].path == "/raw/20150913/01");
  CHECK(all->instances[1].present);
  CHECK_FALSE(all->instances[1].announced);
  auto announced =
      dataset_instances(w.config, raw, kDatasetReadsStart + hours(30),
                        kDatasetReadsStart + hours(31), 10, kNow, *w.db, w.file_systems);
  REQUIRE(announced);
  REQUIRE(announced->instances.size() == 1);
  CHECK(announced->instances[0].announced);
  CHECK(announced->instances[0].present);
}

TEST_CASE("an announcement may not share its path with another announced instance") {
  DatasetReadsWorld w;
  const Dataset& raw = w.config.datasets.at("raw");
  REQUIRE(w.db->announce_instance("raw", kDatasetReadsStart + hours(1), kDatasetReadsStart));
  CHECK(check_announcement(raw, kDatasetReadsStart + hours(1), *w.db));  // the same time again
  CHECK(check_announcement(raw, kDatasetReadsStart + hours(2), *w.db));
  auto refused =
      check_announcement(raw, kDatasetReadsStart + hours(1) + std::chrono::minutes(30), *w.db);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kInvalid);
  CHECK_THAT(refused.error().message, Catch::Contains("does not tell them apart"));
  auto fixed =
      check_announcement(Dataset{"f", "/fixed", "", "_SUCCESS"}, kDatasetReadsStart, *w.db);
  REQUIRE_FALSE(fixed);
  CHECK_THAT(fixed.error().message, Catch::Contains("has no time variables"));
}
