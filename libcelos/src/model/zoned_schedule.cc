// Cron schedules read in a time zone (celos/schedule.h, issue 26, docs/time-zones.md).
//
// Both kinds of expression are evaluated by the UTC cron code on "local time written as if it
// were UTC": a local wall-clock time L is the instant L - offset. An interval expression is cut
// at the zone's transitions, and each piece of constant offset is one plain cron query. A
// fixed-time expression lists its local times and maps each through the zone, so that the DST
// rule decides every gap and overlap by name.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "celos/schedule.h"

namespace celos {
namespace {

using std::chrono::seconds;

// The local times of [start, end) as fake-UTC instants may sit anywhere between the smallest
// and largest offset in force around the window (a day each side covers the other side of
// every transition that can move a slot into the window).
std::pair<seconds, seconds> offset_bounds(const TimeZone& zone, Time start, Time end) {
  const auto margin = std::chrono::hours(26);
  seconds lo = zone.at(start - margin).offset, hi = lo;
  for (auto t = zone.next_transition(start - margin); t && t->at < end + margin;
       t = zone.next_transition(t->at)) {
    lo = std::min({lo, t->before, t->after});
    hi = std::max({hi, t->before, t->after});
  }
  return {lo, hi};
}

class ZonedCronSchedule final : public Schedule {
 public:
  ZonedCronSchedule(CronExpression expression, TimeZone zone, DstRule rule)
      : expression_(std::move(expression)),
        zone_(std::move(zone)),
        rule_(rule),
        fixed_(is_fixed_time(expression_)) {}

  Result<std::vector<Time>> times(Time start, Time end, const ScheduleContext&) const override {
    std::vector<Time> out;
    if (!fixed_) {
      interval_times(start, end, [&](Time t) { out.push_back(t); });
      return out;
    }
    for (const auto& s : fixed_times(start, end)) out.push_back(s.time);
    return out;
  }

  Result<std::vector<ScheduledTime>> explain(Time start, Time end,
                                             const ScheduleContext&) const override {
    if (fixed_) return fixed_times(start, end);
    std::vector<ScheduledTime> out;
    interval_times(start, end, [&](Time t) { out.push_back(ScheduledTime{t}); });
    return out;
  }

  std::string describe() const override {
    return fmt::format("cronSchedule({}) in {}", expression_.text(), zone_.name());
  }
  const TimeZone& time_zone() const override { return zone_; }
  std::vector<std::string> warnings(Time start, Time end) const override;

 private:
  // Every instant in [start, end) whose local time (at the offset then in force) matches.
  template <class Emit>
  void interval_times(Time start, Time end, Emit emit) const {
    for (Time piece = start; piece < end;) {
      const seconds offset = zone_.at(piece).offset;
      const auto transition = zone_.next_transition(piece);
      const Time piece_end = transition && transition->at < end ? transition->at : end;
      for (Time local : expression_.times(piece + offset, piece_end + offset)) emit(local - offset);
      piece = piece_end;
    }
  }

  std::vector<ScheduledTime> fixed_times(Time start, Time end) const;
  void map_local(Time local, std::vector<ScheduledTime>& out) const;

  CronExpression expression_;
  TimeZone zone_;
  DstRule rule_;
  bool fixed_;
};

std::vector<ScheduledTime> ZonedCronSchedule::fixed_times(Time start, Time end) const {
  const auto [lo, hi] = offset_bounds(zone_, start, end);
  std::vector<ScheduledTime> candidates;
  for (Time local : expression_.times(start + lo, end + hi)) map_local(local, candidates);
  std::vector<ScheduledTime> out;
  for (const auto& c : candidates) {
    if (c.time >= start && c.time < end) out.push_back(c);
  }
  // A shifted time can land on a time the expression names anyway (02:30 shifted onto 03:30
  // of "0 30 2,3 * * ?"): the slot is the instant, so it is one slot, the unmoved one.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.time < b.time || (a.time == b.time && a.rule < b.rule);
  });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const auto& a, const auto& b) { return a.time == b.time; }),
            out.end());
  return out;
}

void ZonedCronSchedule::map_local(Time local, std::vector<ScheduledTime>& out) const {
  using Kind = LocalTimeMapping::Kind;
  const auto m = zone_.from_local(to_civil(local));
  switch (m.kind) {
    case Kind::kUnique:
      out.push_back({m.first, DstApplied::kNone});
      return;
    case Kind::kGap:
      if (rule_.gap == DstGap::kShift) out.push_back({m.first, DstApplied::kShift});
      return;
    case Kind::kOverlap:
      switch (rule_.overlap) {
        case DstOverlap::kFirst:
          out.push_back({m.first, DstApplied::kFirst});
          return;
        case DstOverlap::kSecond:
          out.push_back({m.second, DstApplied::kSecond});
          return;
        case DstOverlap::kBoth:
          out.push_back({m.first, DstApplied::kBoth});
          out.push_back({m.second, DstApplied::kBoth});
          return;
      }
  }
}

std::string hh_mm(Time local) {
  const auto c = to_civil(local);
  return fmt::format("{:02}:{:02}", c.hour, c.minute);
}

std::vector<std::string> ZonedCronSchedule::warnings(Time start, Time end) const {
  constexpr std::size_t kMaxWarnings = 20;
  std::vector<std::string> out;
  if (!fixed_ || rule_.explicit_rule) return out;
  for (auto t = zone_.next_transition(start - Seconds(1));
       t && t->at < end && out.size() < kMaxWarnings; t = zone_.next_transition(t->at)) {
    // The local times the transition skips or repeats, as fake-UTC instants.
    const bool gap = t->after > t->before;
    const Time from = t->at + t->before, to = t->at + t->after;
    const Time lo = gap ? from : to, hi = gap ? to : from;
    const auto fires = expression_.next_at_or_after(lo);
    if (!fires || *fires >= hi) continue;
    const auto at = format_time(*fires).substr(0, 16);
    out.push_back(
        gap ? fmt::format("{}: local time {} does not exist (clocks go from {} to {}); with no "
                          "dst rule given, gap \"shift\" moves it later by {} min",
                          describe(), at, hh_mm(from), hh_mm(to),
                          (t->after - t->before).count() / 60)
            : fmt::format("{}: local time {} happens twice (clocks go back from {} to {}); with "
                          "no dst rule given, overlap \"first\" runs it once, at the first",
                          describe(), at, hh_mm(from), hh_mm(to)));
  }
  return out;
}

}  // namespace

bool is_fixed_time(const CronExpression& expression) {
  // The third whitespace-separated field is the hour (the text parsed, so it has one).
  std::string_view text = expression.text();
  for (int field = 0; field < 2; ++field) {
    text.remove_prefix(std::min(text.find_first_not_of(" \t"), text.size()));
    text.remove_prefix(std::min(text.find_first_of(" \t"), text.size()));
  }
  text.remove_prefix(std::min(text.find_first_not_of(" \t"), text.size()));
  const std::string_view hour = text.substr(0, text.find_first_of(" \t"));
  return hour.find_first_of("*/") == std::string_view::npos;
}

std::shared_ptr<const Schedule> make_cron_schedule(CronExpression expression, TimeZone zone,
                                                   DstRule rule) {
  if (zone.is_utc() && zone.name() == "UTC") return make_cron_schedule(std::move(expression));
  return std::make_shared<ZonedCronSchedule>(std::move(expression), std::move(zone), rule);
}

std::map<std::string, std::string> local_time_variables(const TimeZone& zone, Time t) {
  const ZonedTime z = zone.at(t);
  const auto& l = z.local;
  return {{"local.year", fmt::format("{:04}", l.year)},
          {"local.month", fmt::format("{:02}", l.month)},
          {"local.day", fmt::format("{:02}", l.day)},
          {"local.hour", fmt::format("{:02}", l.hour)},
          {"local.minute", fmt::format("{:02}", l.minute)},
          {"local.second", fmt::format("{:02}", l.second)},
          {"local.offset", format_offset(z.offset)},
          {"local.timeZone", zone.name()}};
}

Result<DstGap> parse_dst_gap(std::string_view text) {
  if (text == "shift") return DstGap::kShift;
  if (text == "skip") return DstGap::kSkip;
  return fail(fmt::format("gap \"{}\" is not one of \"shift\", \"skip\"", text),
              ErrorCode::kInvalid);
}

Result<DstOverlap> parse_dst_overlap(std::string_view text) {
  if (text == "first") return DstOverlap::kFirst;
  if (text == "second") return DstOverlap::kSecond;
  if (text == "both") return DstOverlap::kBoth;
  return fail(fmt::format("overlap \"{}\" is not one of \"first\", \"second\", \"both\"", text),
              ErrorCode::kInvalid);
}

std::string_view to_string(DstApplied applied) {
  switch (applied) {
    case DstApplied::kNone:
      return "";
    case DstApplied::kShift:
      return "shift";
    case DstApplied::kFirst:
      return "first";
    case DstApplied::kSecond:
      return "second";
    case DstApplied::kBoth:
      return "both";
  }
  return "";
}

}  // namespace celos
