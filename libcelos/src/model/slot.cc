#include "celos/slot.h"

#include <array>
#include <cstdint>
#include <random>

#include <fmt/format.h>

namespace celos {
namespace {

constexpr std::array<std::string_view, 7> kStatusNames = {
    "WAITING", "READY", "RUNNING", "SUCCESS", "FAILURE", "WAIT_TIMEOUT", "KILLED"};

// One table of legal transitions so that every operation checks the same way.
Result<SlotState> transition(const SlotState& from, std::initializer_list<SlotStatus> allowed,
                             SlotStatus to, std::string_view what) {
  for (SlotStatus s : allowed) {
    if (from.status == s) {
      SlotState next = from;
      next.status = to;
      if (to != SlotStatus::kRunning) next.run_id.reset();  // the attempt is over
      return next;
    }
  }
  return fail(
      fmt::format("cannot {} slot {}: it is {}", what, to_string(from.id), to_string(from.status)),
      ErrorCode::kInvalid);
}

}  // namespace

std::string new_run_id(Time now) {
  // Random bits from a generator per thread (steps record from executor threads), seeded once.
  thread_local std::mt19937_64 random{std::random_device{}()};
  const auto ms = static_cast<std::uint64_t>(now.time_since_epoch().count()) & 0xFFFFFFFFFFFFULL;
  const std::uint64_t a = random(), b = random();
  const std::uint64_t high = (ms << 16) | 0x7000ULL | (a & 0x0FFFULL);            // version 7
  const std::uint64_t low = (b & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;  // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", high >> 32, (high >> 16) & 0xFFFF,
                     high & 0xFFFF, low >> 48, low & 0xFFFFFFFFFFFFULL);
}

std::string_view to_string(SlotStatus s) { return kStatusNames[static_cast<std::size_t>(s)]; }

Result<SlotStatus> parse_slot_status(std::string_view text) {
  for (std::size_t i = 0; i < kStatusNames.size(); ++i) {
    if (kStatusNames[i] == text) return static_cast<SlotStatus>(i);
  }
  return fail(fmt::format("unknown slot status \"{}\"", text), ErrorCode::kInvalid);
}

namespace {
constexpr std::array<std::string_view, 4> kDeadlineNames = {"PENDING", "AT_RISK", "MET", "MISSED"};
}  // namespace

std::string_view to_string(DeadlineState s) { return kDeadlineNames[static_cast<std::size_t>(s)]; }

Result<DeadlineState> parse_deadline_state(std::string_view text) {
  for (std::size_t i = 0; i < kDeadlineNames.size(); ++i) {
    if (kDeadlineNames[i] == text) return static_cast<DeadlineState>(i);
  }
  return fail(fmt::format("unknown deadline state \"{}\" (PENDING, AT_RISK, MET, MISSED)", text),
              ErrorCode::kInvalid);
}

bool is_final(SlotStatus s) {
  return s == SlotStatus::kSuccess || s == SlotStatus::kFailure || s == SlotStatus::kWaitTimeout ||
         s == SlotStatus::kKilled;
}

std::string to_string(const SlotId& id) { return id.workflow + "@" + format_time(id.time); }

SlotState SlotState::waiting(SlotId id) {
  SlotState state;
  state.id = std::move(id);
  return state;
}

SlotState SlotState::of(SlotId id, SlotStatus status, std::optional<std::string> external_id,
                        int retry_count) {
  SlotState state;
  state.id = std::move(id);
  state.status = status;
  state.external_id = std::move(external_id);
  state.retry_count = retry_count;
  return state;
}

Result<SlotState> SlotState::ready() const {
  return transition(*this, {SlotStatus::kWaiting}, SlotStatus::kReady, "make ready");
}

Result<SlotState> SlotState::wait_timeout() const {
  return transition(*this, {SlotStatus::kWaiting}, SlotStatus::kWaitTimeout, "time out");
}

Result<SlotState> SlotState::running(std::string job) const {
  auto next = transition(*this, {SlotStatus::kReady}, SlotStatus::kRunning, "run");
  if (next) {
    next->external_id = std::move(job);
    next->retry_at.reset();  // the wait is over
  }
  return next;
}

Result<SlotState> SlotState::success() const {
  return transition(*this, {SlotStatus::kRunning}, SlotStatus::kSuccess, "succeed");
}

Result<SlotState> SlotState::retry() const {
  // From READY too: a submission the service refused is a failed attempt (SPEC §16).
  auto next =
      transition(*this, {SlotStatus::kRunning, SlotStatus::kReady}, SlotStatus::kWaiting, "retry");
  if (next) {
    next->retry_count = retry_count + 1;
    next->external_id.reset();
    next->consumed.clear();  // only a SUCCESS consumes: the next attempt takes what is new then
  }
  return next;
}

Result<SlotState> SlotState::failure() const {
  return transition(*this, {SlotStatus::kRunning, SlotStatus::kReady}, SlotStatus::kFailure,
                    "fail");
}

Result<SlotState> SlotState::rerun() const {
  auto next = transition(
      *this,
      {SlotStatus::kSuccess, SlotStatus::kFailure, SlotStatus::kWaitTimeout, SlotStatus::kKilled},
      SlotStatus::kWaiting, "rerun");
  if (next) {
    next->retry_count = 0;
    next->external_id.reset();
    next->message.reset();
    next->retry_at.reset();
    next->consumed.clear();  // a rerun releases the instances it had consumed
    next->backfill.reset();  // a rerun by hand is live (a backfill sets it again after)
  }
  return next;
}

Result<SlotState> SlotState::killed() const {
  return transition(*this, {SlotStatus::kWaiting, SlotStatus::kReady, SlotStatus::kRunning},
                    SlotStatus::kKilled, "kill");
}

}  // namespace celos
