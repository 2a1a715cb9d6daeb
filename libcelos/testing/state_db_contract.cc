#include "testing/state_db_contract.h"

#include <algorithm>

#include <catch2/catch.hpp>

namespace celos::testing {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
const Time kDay = make_time(2015, 9, 15);

bool paused(StateDatabase& db, const char* workflow) {
  auto p = db.is_paused(workflow);
  REQUIRE(p);
  return *p;
}

void empty_database_has_nothing(StateDatabase& db) {
  auto slot = db.get_slot({"contract-wf", kDay});
  REQUIRE(slot);
  CHECK_FALSE(slot->has_value());
  auto slots = db.get_slots("contract-wf", kDay, kDay + hours(24));
  REQUIRE(slots);
  CHECK(slots->empty());
  auto reruns = db.rerun_times("contract-wf", kDay);
  REQUIRE(reruns);
  CHECK(reruns->empty());
  CHECK(paused(db, "contract-wf") == false);
  CHECK(db.check());
}

void every_field_round_trips(StateDatabase& db) {
  SlotState full = SlotState::of({"contract-full", kDay + hours(3)}, SlotStatus::kRunning,
                                 "0001-oozie-W \"quoted\" \\ back", 2);
  full.message = "submit failed: HTTP 500, {\"braces\"} and 'quotes'";
  full.retry_at = kDay + hours(3) + std::chrono::minutes(5);
  full.consumed["raw-logs"] = {kDay, kDay + hours(1)};
  full.consumed["other"] = {kDay + hours(2)};
  full.deadline = kDay + hours(6);
  full.deadline_state = DeadlineState::kAtRisk;
  full.run_id = "0190a3c4-5e6f-7abc-8def-0123456789ab";
  const SlotState plain = SlotState::of({"contract-full", kDay + hours(4)}, SlotStatus::kReady);
  REQUIRE(db.put_slots({full, plain}));
  auto back = db.get_slot(full.id);
  REQUIRE(back);
  REQUIRE(back->has_value());
  CHECK(**back == full);
  auto slots = db.get_slots("contract-full", kDay, kDay + hours(24));
  REQUIRE(slots);
  CHECK(*slots == std::vector<SlotState>{full, plain});
}

void ranges_are_start_inclusive_end_exclusive_across_days(StateDatabase& db) {
  std::vector<SlotState> states;
  for (int h = 0; h < 48; ++h) {
    states.push_back(SlotState::of({"contract-range", kDay + hours(h)}, SlotStatus::kSuccess, "j"));
  }
  states.push_back(SlotState::of({"contract-range-other", kDay + hours(21)}, SlotStatus::kReady));
  REQUIRE(db.put_slots(states));
  auto slots = db.get_slots("contract-range", kDay + hours(20), kDay + hours(27));
  REQUIRE(slots);
  REQUIRE(slots->size() == 7);
  CHECK(slots->front().id.time == kDay + hours(20));
  CHECK(slots->back().id.time == kDay + hours(26));
  CHECK(std::is_sorted(slots->begin(), slots->end(),
                       [](const SlotState& a, const SlotState& b) { return a.id < b.id; }));
  auto none = db.get_slots("contract-range", kDay + hours(5), kDay + hours(5));
  REQUIRE(none);
  CHECK(none->empty());
}

void a_window_splits_open_states_from_final_times(StateDatabase& db) {
  SlotState running =
      SlotState::of({"contract-window", kDay + hours(23)}, SlotStatus::kRunning, "r");
  running.message = "second try";
  const std::vector<SlotState> states = {
      SlotState::of({"contract-window", kDay + hours(22)}, SlotStatus::kSuccess, "s"),
      running,
      SlotState::of({"contract-window", kDay + hours(24)}, SlotStatus::kFailure, "f", 2),
      SlotState::of({"contract-window", kDay + hours(25)}, SlotStatus::kReady),
      SlotState::of({"contract-window", kDay + hours(26)}, SlotStatus::kKilled),
      SlotState::of({"contract-window-other", kDay + hours(23)}, SlotStatus::kReady)};
  REQUIRE(db.put_slots(states));
  auto window = db.get_window("contract-window", kDay + hours(23), kDay + hours(26));
  REQUIRE(window);
  CHECK(window->open == std::vector<SlotState>{states[1], states[3]});
  CHECK(window->closed ==
        std::vector<std::pair<Time, SlotStatus>>{{kDay + hours(24), SlotStatus::kFailure}});
}

void later_writes_replace_earlier_ones(StateDatabase& db) {
  const SlotId id{"contract-overwrite", kDay};
  SlotState running = SlotState::of(id, SlotStatus::kRunning, "job-1");
  running.message = "was here";
  REQUIRE(db.put_slots({running}));
  // Within one batch too, the last state of a slot wins.
  REQUIRE(db.put_slots({SlotState::of(id, SlotStatus::kFailure, "job-1"),
                        SlotState::of(id, SlotStatus::kSuccess, "job-1")}));
  auto back = db.get_slot(id);
  REQUIRE(back);
  CHECK(**back == SlotState::of(id, SlotStatus::kSuccess, "job-1"));
}

void rerun_markers_expire_only_for_final_slots(StateDatabase& db) {
  const SlotId final_slot{"contract-rerun", kDay + hours(1)};
  const SlotId nothing_stored{"contract-rerun", kDay + hours(2)};
  const SlotId running_slot{"contract-rerun", kDay + hours(3)};
  const SlotId young{"contract-rerun", kDay + hours(4)};
  REQUIRE(db.put_slots({SlotState::of(final_slot, SlotStatus::kSuccess, "j"),
                        SlotState::of(running_slot, SlotStatus::kRunning, "k"),
                        SlotState::of(young, SlotStatus::kFailure, "l")}));
  REQUIRE(db.mark_rerun(final_slot, kDay));
  REQUIRE(db.mark_rerun(nothing_stored, kDay));
  REQUIRE(db.mark_rerun(running_slot, kDay));
  REQUIRE(db.mark_rerun(young, kDay + hours(24 * 10)));
  auto all = db.rerun_times("contract-rerun", kDay + hours(5));
  REQUIRE(all);
  CHECK(*all ==
        std::vector<Time>{final_slot.time, nothing_stored.time, running_slot.time, young.time});
  CHECK(db.rerun_times("other-workflow", kDay + hours(5))->empty());
  // Fifteen days on, only the marker of the final slot has expired.
  for (int twice = 0; twice < 2; ++twice) {
    auto later = db.rerun_times("contract-rerun", kDay + hours(24 * 15));
    REQUIRE(later);
    CHECK(*later == std::vector<Time>{nothing_stored.time, running_slot.time, young.time});
  }
  // Marking again restamps the marker.
  REQUIRE(db.mark_rerun(final_slot, kDay + hours(24 * 15)));
  CHECK(db.rerun_times("contract-rerun", kDay + hours(24 * 16))->size() == 4);
}

void pause_flags_are_set_and_cleared_idempotently(StateDatabase& db) {
  REQUIRE(db.set_paused("contract-pause", true));
  REQUIRE(db.set_paused("contract-pause", true));
  CHECK(paused(db, "contract-pause") == true);
  CHECK(paused(db, "contract-pause-other") == false);
  REQUIRE(db.set_paused("contract-pause", false));
  CHECK(paused(db, "contract-pause") == false);
}

void a_large_batch_is_stored_whole(StateDatabase& db) {
  std::vector<SlotState> states;
  for (int w = 0; w < 50; ++w) {
    for (int h = 0; h < 168; ++h) {
      states.push_back(SlotState::of({"contract-batch-" + std::to_string(w), kDay + hours(h)},
                                     SlotStatus::kWaiting));
    }
  }
  // Every field survives a large batch too, however it is sent (PostgreSQL: COPY).
  SlotState& odd = states[5];
  odd = SlotState::of(odd.id, SlotStatus::kRunning, "job\t1\\N \\ \r\n\"x\"", 3);
  odd.message = "tab\there\nnewline \\N backslash\\ \"{quotes}\" ☃";
  odd.retry_at = kDay + hours(200);
  odd.consumed["in\tput"] = {kDay, kDay + hours(1)};
  odd.deadline = kDay + hours(201);
  odd.deadline_state = DeadlineState::kMissed;
  REQUIRE(db.put_slots(states));
  auto slots = db.get_slots("contract-batch-49", kDay, kDay + hours(24 * 7));
  REQUIRE(slots);
  CHECK(slots->size() == 168);
  CHECK(db.get_slot(odd.id).value() == odd);
  CHECK(db.get_slot(states[6].id).value() == states[6]);
}

void announced_instances_are_idempotent_and_ranged(StateDatabase& db) {
  REQUIRE(db.announce_instance("contract-ds", kDay + hours(2), kDay + hours(3)));
  REQUIRE(db.announce_instance("contract-ds", kDay + hours(2), kDay + hours(4)));
  REQUIRE(db.announce_instance("contract-ds", kDay + hours(1), kDay + hours(3)));
  REQUIRE(db.announce_instance("contract-ds", kDay + hours(30), kDay + hours(31)));
  REQUIRE(db.announce_instance("contract-ds-other", kDay + hours(1), kDay + hours(3)));
  // A group: one stored already, one twice, one new.
  REQUIRE(db.announce_instances({{"contract-ds", kDay + hours(2)},
                                 {"contract-ds", kDay + hours(5)},
                                 {"contract-ds", kDay + hours(5)}},
                                kDay + hours(6)));
  auto found = db.announced_instances("contract-ds", kDay + hours(1), kDay + hours(30));
  REQUIRE(found);
  CHECK(*found == std::vector<Time>{kDay + hours(1), kDay + hours(2), kDay + hours(5)});
  CHECK(db.announced_instances("contract-ds", kDay, kDay)->empty());
}

// The API lists and the step counts announced instances with one ranged read each (issue 33):
// many instances across day boundaries come back whole, ascending, within [start, end).
void many_announced_instances_come_back_in_one_ranged_read(StateDatabase& db) {
  const Time first = kDay + hours(23);
  std::vector<StateDatabase::Announcement> group;  // in one write, as a burst is (issue 28)
  for (int i = 0; i < 1500; ++i) group.push_back({"contract-many", first + minutes(i)});
  REQUIRE(db.announce_instances(group, kDay));
  auto all = db.announced_instances("contract-many", kDay, kDay + hours(24 * 3));
  REQUIRE(all);
  REQUIRE(all->size() == 1500);
  CHECK(std::is_sorted(all->begin(), all->end()));
  CHECK(all->front() == first);
  CHECK(all->back() == first + minutes(1499));
  auto part = db.announced_instances("contract-many", first + minutes(10), first + minutes(1490));
  REQUIRE(part);
  CHECK(part->size() == 1480);
  CHECK(part->front() == first + minutes(10));
  CHECK(part->back() == first + minutes(1489));
  // A read after another announcement in a day already read sees it (no stale cache).
  REQUIRE(db.announce_instance("contract-many", first + minutes(1500), kDay));
  auto again = db.announced_instances("contract-many", first, first + minutes(1501));
  REQUIRE(again);
  CHECK(again->size() == 1501);
}

void maintenance_is_off_until_set_and_round_trips(StateDatabase& db) {
  auto initial = db.maintenance();
  REQUIRE(initial);
  CHECK(initial->mode == MaintenanceMode::kOff);
  CHECK_FALSE(initial->reason);
  Maintenance drain{MaintenanceMode::kDrain, "patching \"db\" ☃", kDay + hours(3)};
  REQUIRE(db.set_maintenance(drain));
  auto stored = db.maintenance();
  REQUIRE(stored);
  CHECK(stored->mode == MaintenanceMode::kDrain);
  CHECK(stored->reason == drain.reason);
  CHECK(stored->since == drain.since);
  REQUIRE(db.set_maintenance(Maintenance{MaintenanceMode::kOff, std::nullopt, kDay}));
  CHECK(db.maintenance()->mode == MaintenanceMode::kOff);
  CHECK_FALSE(db.maintenance()->reason);
}

void history_is_kept_per_slot_in_append_order(StateDatabase& db) {
  const SlotId a{"contract-history", kDay + hours(1)}, b{"contract-history", kDay + hours(2)};
  CHECK(db.slot_history(a).value().empty());
  SlotState running = SlotState::of(a, SlotStatus::kRunning, "job-1", 1);
  running.message = "retried";
  const std::vector<SlotHistoryEntry> entries = {
      {kDay + hours(3), std::nullopt, SlotState::of(a, SlotStatus::kReady), "step"},
      {kDay + hours(3), std::nullopt, SlotState::of(b, SlotStatus::kReady), "step"},
      {kDay + hours(4), SlotStatus::kReady, running, "api:ci@10.0.0.1"}};
  REQUIRE(db.append_history(entries));
  auto history = db.slot_history(a);
  REQUIRE(history);
  REQUIRE(history->size() == 2);
  CHECK((*history)[0] == entries[0]);
  CHECK((*history)[1] == entries[2]);
  CHECK(db.slot_history(b).value().size() == 1);
  REQUIRE(db.mark_reruns({a, b}, kDay + hours(5)));
  CHECK(db.rerun_times("contract-history", kDay + hours(6)).value() ==
        std::vector<Time>{a.time, b.time});
}

// prefetch() is a hint: whatever a backend keeps, reads answer what was written.
// Retention: a slot's history goes once its time and all its changes are older than the cutoff
// (the file backend judges a whole day file: the slots here are on days of their own).
void history_older_than_the_cutoff_is_pruned(StateDatabase& db) {
  const Time now = kDay - std::chrono::days(100);
  const Time cutoff = now - std::chrono::days(30);
  const SlotId old{"contract-prune", now - std::chrono::days(40)};
  const SlotId recent{"contract-prune", now - std::chrono::days(1)};
  const SlotId rerun{"contract-prune", now - std::chrono::days(50)};
  auto entry = [](const SlotId& id, Time at, SlotStatus to) {
    return SlotHistoryEntry{at, SlotStatus::kWaiting, SlotState::of(id, to), "step"};
  };
  REQUIRE(db.append_history({entry(old, old.time + hours(1), SlotStatus::kReady),
                             entry(old, old.time + hours(2), SlotStatus::kRunning),
                             entry(recent, recent.time + hours(1), SlotStatus::kReady),
                             entry(rerun, rerun.time + hours(1), SlotStatus::kSuccess)}));
  REQUIRE(db.append_history({entry(rerun, now - std::chrono::days(2), SlotStatus::kWaiting)}));
  auto pruned = db.prune_history(cutoff);
  REQUIRE(pruned);
  CHECK(*pruned == 2);
  CHECK(db.slot_history(old).value().empty());
  CHECK(db.slot_history(recent).value().size() == 1);
  CHECK(db.slot_history(rerun).value().size() == 2);  // changed within the retention: kept
  CHECK(db.prune_history(cutoff).value() == 0);
  // Later, everything is old.
  CHECK(db.prune_history(now + std::chrono::days(1)).value() == 3);
  CHECK(db.slot_history(recent).value().empty());
  CHECK(db.slot_history(rerun).value().empty());
}

void reads_after_a_prefetch_see_every_write(StateDatabase& db) {
  const std::string wf = "contract-prefetch";
  const SlotId old_slot{wf, kDay - hours(48)}, first{wf, kDay + hours(1)},
      second{wf, kDay + hours(2)};
  REQUIRE(db.put_slots({SlotState::of(first, SlotStatus::kSuccess, "a"),
                        SlotState::of(old_slot, SlotStatus::kRunning, "o")}));
  REQUIRE(db.mark_rerun(old_slot, kDay));
  REQUIRE(db.prefetch({wf, "contract-prefetch-none"}, kDay));
  CHECK(db.get_slots(wf, kDay, kDay + hours(24)).value() ==
        std::vector<SlotState>{SlotState::of(first, SlotStatus::kSuccess, "a")});
  CHECK(db.get_slots("contract-prefetch-none", kDay, kDay + hours(24)).value().empty());
  CHECK(db.rerun_times(wf, kDay).value() == std::vector<Time>{old_slot.time});
  CHECK(paused(db, wf.c_str()) == false);

  REQUIRE(db.put_slots({SlotState::of(second, SlotStatus::kRunning, "b"),
                        SlotState::of(first, SlotStatus::kReady, std::nullopt, 1),
                        SlotState::of(old_slot, SlotStatus::kSuccess, "o")}));
  CHECK(db.get_slots(wf, kDay, kDay + hours(24)).value() ==
        std::vector<SlotState>{SlotState::of(first, SlotStatus::kReady, std::nullopt, 1),
                               SlotState::of(second, SlotStatus::kRunning, "b")});
  CHECK(db.get_slot(old_slot).value() == SlotState::of(old_slot, SlotStatus::kSuccess, "o"));
  CHECK(db.get_slot({wf, kDay + hours(3)}).value() == std::nullopt);
  REQUIRE(db.set_paused(wf, true));
  CHECK(paused(db, wf.c_str()) == true);
  REQUIRE(db.set_paused(wf, false));
  CHECK(paused(db, wf.c_str()) == false);
  REQUIRE(db.mark_rerun({wf, kDay + hours(5)}, kDay));
  CHECK(db.rerun_times(wf, kDay).value() == std::vector<Time>{old_slot.time, kDay + hours(5)});
  // The marker of the slot that became final expires; the young one stays.
  CHECK(db.rerun_times(wf, kDay + hours(24 * 15)).value() == std::vector<Time>{kDay + hours(5)});

  // A later window: slots before it are still read, a new workflow is seen.
  REQUIRE(db.prefetch({wf, "contract-prefetch-none"}, kDay + hours(2)));
  CHECK(db.get_slots(wf, kDay, kDay + hours(24)).value().size() == 2);
  REQUIRE(db.put_slots(
      {SlotState::of({"contract-prefetch-none", kDay + hours(4)}, SlotStatus::kReady)}));
  CHECK(db.get_slots("contract-prefetch-none", kDay + hours(2), kDay + hours(24)).value().size() ==
        1);
}

// Issue 29: a slot's plan id, in small and large (COPY) batches, and the plans' records.
void backfill_plans_and_their_slots_round_trip(StateDatabase& db) {
  SlotState owned = SlotState::of({"contract-backfill", kDay}, SlotStatus::kWaiting);
  owned.backfill = "bf-1";
  REQUIRE(db.put_slots({owned}));
  CHECK(db.get_slot(owned.id).value() == owned);
  std::vector<SlotState> many;
  for (int i = 0; i < 6000; ++i) {
    SlotState s = SlotState::of({"contract-backfill-many", kDay + hours(i)}, SlotStatus::kReady);
    s.backfill = "bf-2";
    many.push_back(s);
  }
  REQUIRE(db.put_slots(many));
  CHECK(db.get_slot(many.back().id).value()->backfill == "bf-2");
  CHECK(db.backfill_records().value().empty());
  REQUIRE(db.put_backfill_record("bf-1", R"({"id":"bf-1","n":1})"));
  REQUIRE(db.put_backfill_record("bf-2", R"({"id":"bf-2"})"));
  REQUIRE(db.put_backfill_record("bf-1", R"({"id":"bf-1","n":2})"));
  auto records = db.backfill_records().value();
  std::sort(records.begin(), records.end());
  CHECK(records == std::vector<std::string>{R"({"id":"bf-1","n":2})", R"({"id":"bf-2"})"});
}

}  // namespace

void check_state_database_contract(StateDatabase& db) {
  backfill_plans_and_their_slots_round_trip(db);
  history_is_kept_per_slot_in_append_order(db);
  empty_database_has_nothing(db);
  every_field_round_trips(db);
  ranges_are_start_inclusive_end_exclusive_across_days(db);
  later_writes_replace_earlier_ones(db);
  a_window_splits_open_states_from_final_times(db);
  rerun_markers_expire_only_for_final_slots(db);
  pause_flags_are_set_and_cleared_idempotently(db);
  a_large_batch_is_stored_whole(db);
  announced_instances_are_idempotent_and_ranged(db);
  many_announced_instances_come_back_in_one_ranged_read(db);
  maintenance_is_off_until_set_and_round_trips(db);
  reads_after_a_prefetch_see_every_write(db);
  history_older_than_the_cutoff_is_pruned(db);
}

}  // namespace celos::testing
