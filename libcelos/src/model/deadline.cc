// Deadline rules and states (celos/deadline.h).
#include "celos/deadline.h"

#include <cctype>

#include <fmt/format.h>

#include "celos/time_zone.h"
#include "celos/workflow.h"

namespace celos {
namespace {

using std::chrono::seconds;

Result<seconds> bad_duration(std::string_view text, std::string_view why) {
  return fail(fmt::format("\"{}\" is not an ISO 8601 duration such as \"PT3H\" or \"P1DT30M\": {}",
                          text, why),
              ErrorCode::kInvalid);
}

// The number before a designator; `pos` moves past both.
std::optional<long long> number_at(std::string_view text, std::size_t& pos) {
  const std::size_t from = pos;
  long long n = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    if (n > 100'000'000) return std::nullopt;  // far beyond any deadline
    n = n * 10 + (text[pos++] - '0');
  }
  if (pos == from) return std::nullopt;
  return n;
}

}  // namespace

Result<seconds> parse_iso_duration(std::string_view text) {
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    return bad_duration(text, "a duration may not carry a sign (a deadline is after the slot)");
  }
  if (text.size() < 3 || text[0] != 'P') return bad_duration(text, "it must start with \"P\"");
  seconds total{0};
  bool in_time = false;
  bool any = false;
  std::string_view order = "D";  // designators still allowed, in order
  for (std::size_t pos = 1; pos < text.size();) {
    if (text[pos] == 'T') {
      if (in_time) return bad_duration(text, "a second \"T\"");
      in_time = true;
      order = "HMS";
      ++pos;
      continue;
    }
    auto n = number_at(text, pos);
    if (!n) return bad_duration(text, "a number is missing or too large (no fractions)");
    if (pos == text.size()) return bad_duration(text, "a number without its designator");
    const char unit = text[pos++];
    const auto at = order.find(unit);
    if (at == std::string_view::npos) {
      return bad_duration(text, fmt::format("unexpected \"{}\" (use D before T, and H, M, S after "
                                            "it, in that order; no Y, M or W before T)",
                                            unit));
    }
    order.remove_prefix(at + 1);
    const long long per = unit == 'D' ? 86400 : unit == 'H' ? 3600 : unit == 'M' ? 60 : 1;
    total += seconds(*n * per);
    any = true;
  }
  if (!any) return bad_duration(text, "no amount");
  if (text.back() == 'T') return bad_duration(text, "a \"T\" without hours, minutes or seconds");
  return total;
}

Result<seconds> parse_time_of_day(std::string_view text) {
  auto bad = [&] {
    return fail(
        fmt::format("\"{}\" is not a time of day HH:MM or HH:MM:SS (00:00 to 23:59:59)", text),
        ErrorCode::kInvalid);
  };
  if (text.size() != 5 && text.size() != 8) return bad();
  int fields[3] = {0, 0, 0};
  for (std::size_t i = 0; i * 3 < text.size(); ++i) {
    const char a = text[i * 3], b = text[i * 3 + 1];
    if (!std::isdigit(static_cast<unsigned char>(a)) ||
        !std::isdigit(static_cast<unsigned char>(b)))
      return bad();
    if (i * 3 + 2 < text.size() && text[i * 3 + 2] != ':') return bad();
    fields[i] = (a - '0') * 10 + (b - '0');
  }
  if (fields[0] > 23 || fields[1] > 59 || fields[2] > 59) return bad();
  return seconds(fields[0] * 3600 + fields[1] * 60 + fields[2]);
}

Result<void> validate_deadline_rule(const DeadlineRule& rule) {
  if (rule.after && *rule.after < seconds(0)) {
    return fail("the deadline's \"after\" may not be negative", ErrorCode::kInvalid);
  }
  if (rule.day_offset < 0 || rule.day_offset > 366) {
    return fail(fmt::format("the deadline's \"dayOffset\" must be a whole number from 0 to 366, "
                            "got {}",
                            rule.day_offset),
                ErrorCode::kInvalid);
  }
  if (auto zone = TimeZone::load(rule.time_zone); !zone) {
    return fail(zone.error().message, ErrorCode::kInvalid);
  }
  return {};
}

Result<Time> deadline_of(const DeadlineRule& rule, Time slot) {
  if (rule.after) return slot + *rule.after;
  auto zone = TimeZone::load(rule.time_zone);
  if (!zone) return fail(zone.error().message, ErrorCode::kInvalid);
  // The slot's local date in the zone, plus dayOffset days, at the local time `at`.
  const CivilTime local = zone->at(slot).local;
  const std::chrono::sys_days date =
      std::chrono::sys_days(std::chrono::year_month_day(std::chrono::year(local.year),
                                                        std::chrono::month(unsigned(local.month)),
                                                        std::chrono::day(unsigned(local.day)))) +
      std::chrono::days(rule.day_offset);
  const CivilTime day = to_civil(Time(date));
  const auto at = std::chrono::hh_mm_ss<std::chrono::seconds>(rule.at);
  // A time the clocks skip (spring forward) moves later by the gap; a time that happens twice
  // (autumn) is its first occurrence: the earlier deadline.
  return zone
      ->from_local(CivilTime{day.year, day.month, day.day, int(at.hours().count()),
                             int(at.minutes().count()), int(at.seconds().count()), 0})
      .first;
}

std::optional<Time> effective_deadline(const Workflow& workflow, const SlotState& slot) {
  if (slot.deadline) return slot.deadline;
  if (!workflow.deadline) return std::nullopt;
  auto d = deadline_of(*workflow.deadline, slot.id.time);
  if (!d) return std::nullopt;  // checked when the workflow was loaded
  return *d;
}

std::optional<DeadlineState> deadline_state_at(const SlotState& slot, Time deadline, Time now,
                                               const DeadlineForecast& forecast) {
  if (slot.deadline_state == DeadlineState::kMissed) return DeadlineState::kMissed;
  switch (slot.status) {
    case SlotStatus::kKilled:
      return std::nullopt;
    case SlotStatus::kSuccess:
      // A SUCCESS the step saw after the deadline was stored as MISSED when it saw it.
      return DeadlineState::kMet;
    case SlotStatus::kFailure:
    case SlotStatus::kWaitTimeout:
      return DeadlineState::kMissed;
    default:
      break;
  }
  if (now >= deadline) return DeadlineState::kMissed;
  if (forecast.finish && *forecast.finish > deadline) return DeadlineState::kAtRisk;
  return DeadlineState::kPending;
}

}  // namespace celos
