// Backfill plans (celos/backfill.h): creating one (matching the workflows, counting the slots),
// reading them, and the operator's pause, resume and cancel. The per-step admission is in
// backfill_pump.cc.
#include "celos/backfill.h"

#include <algorithm>
#include <array>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "model/backfill_count.h"

namespace celos {
namespace {

constexpr std::array<std::string_view, 3> kReprocess = {"missing", "failed", "all"};
constexpr std::array<std::string_view, 2> kOrders = {"oldest", "newest"};
constexpr std::array<std::string_view, 4> kStates = {"running", "paused", "cancelled", "done"};
// The longest range a plan may cover (issue 29: "absurd" ranges are refused).
constexpr auto kMaxRange = std::chrono::hours(24 * (365 * 10 + 3));

template <std::size_t N>
Result<std::size_t> parse_name(const std::array<std::string_view, N>& names, std::string_view text,
                               std::string_view parameter) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) return i;
  }
  std::string list;
  for (std::string_view n : names) list += (list.empty() ? "" : ", ") + std::string(n);
  return fail(fmt::format("parameter {}: \"{}\" is not one of {}", parameter, text, list),
              ErrorCode::kInvalid);
}

// "bf-20261126T223000-4f2a9c": sortable by creation, unique across leaders by its random tail.
std::string new_plan_id(Time now) {
  std::string stamp = format_time(now);  // 2026-11-26T22:30:00.000Z
  stamp.erase(
      std::remove_if(stamp.begin(), stamp.end(), [](char c) { return c == '-' || c == ':'; }),
      stamp.end());
  stamp = stamp.substr(0, 15);  // 20261126T223000
  std::random_device random;
  return fmt::format("bf-{}-{:06x}", stamp, random() & 0xffffffu);
}

Result<BackfillPlan> find_plan(StateDatabase& db, const std::string& id) {
  auto records = db.backfill_records();
  if (!records) return tl::unexpected(records.error());
  for (const std::string& r : *records) {
    auto plan = backfill_from_json(r);
    if (plan && plan->id == id) return plan;
  }
  return fail(fmt::format("unknown backfill \"{}\"", id), ErrorCode::kNotFound);
}

}  // namespace

std::string_view to_string(Reprocess r) { return kReprocess[static_cast<std::size_t>(r)]; }
std::string_view to_string(BackfillOrder o) { return kOrders[static_cast<std::size_t>(o)]; }
std::string_view to_string(BackfillState s) { return kStates[static_cast<std::size_t>(s)]; }

Result<Reprocess> parse_reprocess(std::string_view text) {
  auto i = parse_name(kReprocess, text, "reprocess");
  if (!i) return tl::unexpected(i.error());
  return static_cast<Reprocess>(*i);
}

Result<BackfillOrder> parse_backfill_order(std::string_view text) {
  auto i = parse_name(kOrders, text, "order");
  if (!i) return tl::unexpected(i.error());
  return static_cast<BackfillOrder>(*i);
}

bool reprocess_matches(Reprocess reprocess, const std::optional<SlotState>& state) {
  if (!state) return reprocess != Reprocess::kFailed;
  const SlotStatus s = state->status;
  if (state->backfill && !is_final(s)) return false;  // another plan's, still in flight
  switch (reprocess) {
    case Reprocess::kMissing:
      return s == SlotStatus::kWaiting || s == SlotStatus::kReady;
    case Reprocess::kFailed:
      return s == SlotStatus::kFailure || s == SlotStatus::kWaitTimeout || s == SlotStatus::kKilled;
    case Reprocess::kAll:
      return s != SlotStatus::kRunning;
  }
  return false;
}

std::size_t BackfillPlan::ended_count() const {
  std::size_t n = 0;
  for (const auto& [_, count] : ended) n += count;
  return n;
}

Result<BackfillCreated> Backfills::create(const BackfillRequest& request) {
  if (request.start >= request.end) {
    return fail("parameters start and end: start must be before end", ErrorCode::kInvalid);
  }
  if (request.end - request.start > kMaxRange) {
    return fail("parameters start and end: the range is over 10 years", ErrorCode::kInvalid);
  }
  if (request.max_running < 1) {
    return fail("parameter maxRunning: must be at least 1", ErrorCode::kInvalid);
  }
  auto workflows = detail::match_workflows(config_, request.workflows);
  if (!workflows) return tl::unexpected(workflows.error());
  BackfillPlan plan;
  plan.workflows = *workflows;
  plan.start = request.start;
  plan.end = std::min(request.end, request.now);  // later slots are the schedule's own
  plan.reprocess = request.reprocess;
  auto counts = detail::count_backfill(config_, db_, plan, request.max_slots);
  if (!counts) return tl::unexpected(counts.error());
  BackfillCreated created;
  created.dry_run = request.dry_run;
  created.workflows = std::move(*counts);
  for (const auto& [_, n] : created.workflows) created.slots += n;
  if (request.dry_run) return created;
  plan.id = new_plan_id(request.now);
  plan.order = request.order;
  plan.max_running = request.max_running;
  plan.created = request.now;
  plan.by = request.by;
  plan.total = created.slots;
  if (auto stored = db_.put_backfill_record(plan.id, backfill_to_json(plan)); !stored) {
    return tl::unexpected(stored.error());
  }
  spdlog::info("backfill {} created by {}: {} slots of {} workflows in [{}, {})", plan.id, plan.by,
               plan.total, plan.workflows.size(), format_time(plan.start), format_time(plan.end));
  created.id = plan.id;
  return created;
}

Result<std::vector<BackfillPlan>> Backfills::list() {
  auto records = db_.backfill_records();
  if (!records) return tl::unexpected(records.error());
  std::vector<BackfillPlan> out;
  for (const std::string& r : *records) {
    auto plan = backfill_from_json(r);
    if (!plan) return tl::unexpected(plan.error());
    out.push_back(std::move(*plan));
  }
  std::sort(out.begin(), out.end(),
            [](const BackfillPlan& a, const BackfillPlan& b) { return a.id < b.id; });
  return out;
}

Result<BackfillPlan> Backfills::get(const std::string& id) { return find_plan(db_, id); }

Result<BackfillProgress> Backfills::progress(const BackfillPlan& plan, Time now) {
  BackfillProgress p;
  p.plan = plan;
  p.slots["total"] = plan.total;
  for (const auto& [status, n] : plan.ended) p.slots[std::string(to_string(status))] += n;
  for (const SlotId& id : plan.in_flight) {
    auto state = db_.get_slot(id);
    if (!state) return tl::unexpected(state.error());
    const SlotStatus s = *state ? (*state)->status : SlotStatus::kWaiting;
    ++p.slots[std::string(to_string(s))];
  }
  const std::size_t started = plan.ended_count() + plan.in_flight.size();
  const bool over = plan.state == BackfillState::kDone || plan.state == BackfillState::kCancelled;
  p.slots["PENDING"] = over || started >= plan.total ? 0 : plan.total - started;
  const Time until = plan.finished.value_or(now);
  const double hours = std::max(
      1.0 / 60, std::chrono::duration<double, std::ratio<3600>>(until - plan.created).count());
  p.rate_per_hour = static_cast<double>(plan.ended_count()) / hours;
  const std::size_t left = p.slots["PENDING"] + plan.in_flight.size();
  if (plan.state == BackfillState::kRunning && p.rate_per_hour > 0) {
    const auto ms = static_cast<std::int64_t>(static_cast<double>(left) / p.rate_per_hour * 3.6e6);
    p.eta = now + std::chrono::milliseconds(ms);
  }
  return p;
}

Result<Backfills::Acted> Backfills::act(const std::string& id, BackfillAction action, Time now) {
  auto plan = find_plan(db_, id);
  if (!plan) return tl::unexpected(plan.error());
  Acted acted;
  if (plan->state == BackfillState::kDone || plan->state == BackfillState::kCancelled) {
    acted.conflict = fmt::format("backfill {} is {}", id, to_string(plan->state));
    acted.plan = std::move(*plan);
    return acted;
  }
  if (action == BackfillAction::kCancel) {
    std::vector<SlotState> states;
    for (const SlotId& slot : plan->in_flight) {
      auto state = db_.get_slot(slot);
      if (!state) return tl::unexpected(state.error());
      SlotState s = state->value_or(SlotState::waiting(slot));
      if (s.status != SlotStatus::kWaiting && s.status != SlotStatus::kReady) continue;
      if (s.backfill != plan->id) continue;
      SlotState killed = s.killed().value();
      killed.message = fmt::format("backfill {} cancelled", plan->id);
      states.push_back(killed);
      acted.killed.emplace_back(std::move(s), std::move(killed));
    }
    if (auto written = db_.put_slots(states); !written) return tl::unexpected(written.error());
    plan->state = BackfillState::kCancelled;
    plan->finished = now;
  } else {
    plan->state =
        action == BackfillAction::kPause ? BackfillState::kPaused : BackfillState::kRunning;
  }
  if (auto stored = db_.put_backfill_record(plan->id, backfill_to_json(*plan)); !stored) {
    return tl::unexpected(stored.error());
  }
  spdlog::info("backfill {}: {}", plan->id, to_string(plan->state));
  acted.plan = std::move(*plan);
  return acted;
}

}  // namespace celos
