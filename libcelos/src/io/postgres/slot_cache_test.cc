#include "io/postgres/slot_cache.h"

#include <catch2/catch.hpp>

#include "celos/state_db.h"

using namespace celos;
using std::chrono::hours;

namespace {

const Time kDay = make_time(2015, 9, 15);

SlotState at(const char* workflow, int hour, SlotStatus status = SlotStatus::kReady) {
  return SlotState::of({workflow, kDay + hours(hour)}, status);
}

// Loads `workflows` from `start` on with `rows`, as a prefetch does.
void load(SlotCache& cache, SlotCache::Owner owner, const std::vector<std::string>& workflows,
          Time start, std::vector<SlotState> rows) {
  auto missing = cache.missing(owner, workflows, start);
  cache.fill_slots(owner, missing.generation, missing.workflows, start, std::move(rows));
  cache.fill_markers(owner, missing.generation, {});
  cache.fill_paused(owner, missing.generation, {});
}

}  // namespace

TEST_CASE("the slot cache answers only what it loaded, from the floor on") {
  SlotCache cache;
  CHECK_FALSE(cache.slots(1, "wf", kDay, kDay + hours(24)));
  load(cache, 1, {"wf"}, kDay + hours(2), {at("wf", 3), at("wf", 5)});
  CHECK(cache.slots(1, "wf", kDay + hours(2), kDay + hours(24)) ==
        std::vector<SlotState>{at("wf", 3), at("wf", 5)});
  CHECK(cache.slots(1, "wf", kDay + hours(4), kDay + hours(5))->empty());
  CHECK_FALSE(cache.slots(1, "wf", kDay + hours(1), kDay + hours(24)));  // below the floor
  CHECK_FALSE(cache.slots(1, "other", kDay + hours(2), kDay + hours(24)));
  CHECK(cache.slot(1, at("wf", 3).id).value() == at("wf", 3));
  CHECK(cache.slot(1, at("wf", 4).id).value() == std::nullopt);  // loaded: nothing stored
  CHECK_FALSE(cache.slot(1, at("wf", 1).id));
  CHECK(cache.paused(1, "wf") == false);
}

TEST_CASE("the slot cache follows this process's writes") {
  SlotCache cache;
  load(cache, 1, {"wf"}, kDay, {at("wf", 3)});
  cache.put({at("wf", 3, SlotStatus::kRunning), at("wf", 4), at("other", 4)});
  CHECK(cache.slots(1, "wf", kDay, kDay + hours(24))->size() == 2);
  CHECK(cache.slot(1, at("wf", 3).id)->value().status == SlotStatus::kRunning);
  CHECK_FALSE(cache.slots(1, "other", kDay, kDay + hours(24)));  // never loaded: not cached
  cache.set_paused("wf", true);
  CHECK(cache.paused(1, "wf") == true);
  cache.forget_reruns();
  CHECK_FALSE(cache.rerun_times(1, "wf", kDay));
}

TEST_CASE("another owner empties the slot cache, no owner bypasses it") {
  SlotCache cache;
  load(cache, 1, {"wf"}, kDay, {at("wf", 3)});
  CHECK_FALSE(cache.slots(std::nullopt, "wf", kDay, kDay + hours(24)));  // lost the lease
  CHECK_FALSE(cache.slots(1, "wf", kDay, kDay + hours(24)));             // and what it held is gone
  load(cache, 1, {"wf"}, kDay, {at("wf", 3)});
  CHECK_FALSE(cache.slots(2, "wf", kDay, kDay + hours(24)));  // a new epoch starts empty
  CHECK(cache.size() == 0);
}

TEST_CASE("a fill read before a write was applied is dropped") {
  SlotCache cache;
  auto missing = cache.missing(1, {"wf"}, kDay);
  REQUIRE(missing.workflows == std::vector<std::string>{"wf"});
  cache.put({at("wf", 3, SlotStatus::kRunning)});  // committed while the prefetch read
  cache.fill_slots(1, missing.generation, missing.workflows, kDay, {at("wf", 3)});
  CHECK_FALSE(cache.slots(1, "wf", kDay, kDay + hours(24)));
}

TEST_CASE("a moving window trims the slot cache and asks only for new workflows") {
  SlotCache cache;
  load(cache, 1, {"wf"}, kDay, {at("wf", 1), at("wf", 5)});
  auto missing = cache.missing(1, {"wf", "new"}, kDay + hours(2));
  CHECK(missing.workflows == std::vector<std::string>{"new"});
  CHECK_FALSE(missing.markers);
  CHECK(cache.size() == 1);
  CHECK_FALSE(cache.slots(1, "wf", kDay, kDay + hours(24)));
}

TEST_CASE("cached rerun markers expire as the database's do") {
  SlotCache cache;
  auto missing = cache.missing(1, {}, kDay);
  const Time old = kDay - hours(24 * 20);
  cache.fill_markers(1, missing.generation,
                     {{at("wf", 1).id, old, SlotStatus::kSuccess},
                      {at("wf", 2).id, old, std::nullopt},
                      {at("wf", 3).id, old, SlotStatus::kRunning},
                      {at("wf", 4).id, kDay, SlotStatus::kFailure},
                      {at("wx", 1).id, kDay, std::nullopt}});
  CHECK(cache.rerun_times(1, "wf", kDay + hours(5)) ==
        std::vector<Time>{kDay + hours(2), kDay + hours(3), kDay + hours(4)});
  cache.put({at("wf", 3, SlotStatus::kSuccess)});  // the followed slot ends: its marker expires
  CHECK(cache.rerun_times(1, "wf", kDay + hours(5)) ==
        std::vector<Time>{kDay + hours(2), kDay + hours(4)});
  CHECK(cache.rerun_times(1, "w", kDay)->empty());
}

TEST_CASE("workflows no prefetch names any more are dropped from the slot cache") {
  SlotCache cache;
  load(cache, 1, {"kept", "removed"}, kDay, {at("kept", 1), at("removed", 1)});
  for (std::uint64_t i = 0; i < SlotCache::kForgetAfter; ++i) {
    CHECK(cache.missing(1, {"kept"}, kDay).workflows.empty());
  }
  CHECK(cache.size() == 2);  // not yet
  cache.missing(1, {"kept"}, kDay);
  CHECK(cache.size() == 1);
  CHECK_FALSE(cache.slots(1, "removed", kDay, kDay + hours(24)));
  CHECK(cache.slots(1, "kept", kDay, kDay + hours(24))->size() == 1);
}
