#include "testing/zone_property.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "celos/schedule.h"
#include "celos/time_zone.h"

namespace celos::testing {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

constexpr std::size_t kMaxFailures = 20;

std::vector<std::string> quartz_examples() {
  return {"0 0 12 * * ?",         "0 15 10 ? * *",
          "0 15 10 * * ?",        "0 15 10 * * ? *",
          "0 15 10 * * ? 2005",   "0 * 14 * * ?",
          "0 0/5 14 * * ?",       "0 0/5 14,18 * * ?",
          "0 0-5 14 * * ?",       "0 10,44 14 ? 3 WED",
          "0 15 10 ? * MON-FRI",  "0 15 10 15 * ?",
          "0 15 10 L * ?",        "0 15 10 L-2 * ?",
          "0 15 10 ? * 6L",       "0 15 10 ? * 6L 2002-2005",
          "0 15 10 ? * 6#3",      "0 0 12 1/5 * ?",
          "0 11 11 11 11 ?",      "0 0 0 * * ?",
          "0 0 * * * ?",          "0 * * * * ?",
          "0 0 1 * * ?",          "0 0 2 * * ?",
          "0 30 2 * * ?",         "0 0/15 * * * ?",
          "0 0 */2 * * ?",        "0 0 1/3 * * ?",
          "0 30 */6 * * ?",       "0 0/10 * * * ?",
          "0 45 * * * ?",         "0 0 0/4 * * ?",
          "0 5/20 * ? * MON-FRI", "0 0 1-23/2 * * ?",
          "0 30 1,2,3 * * ?",     "0 0 0-4 * * ?",
          "0 30 2,3 * * ?",       "0 0 1-3 ? * SUN",
          "0 0/30 1-3 * * ?",     "0 0 22-2 * * ?",
          "30 59 1 * * ?",        "0 0 23 L * ?",
          "0 0 6 ? * MON-FRI",    "0 0 6 * * ?",
          "0 0 12 ? * SUN",       "0 15 2 1W * ?",
          "0 0 3 LW * ?",         "0 0 0 1 1 ?"};
}

}  // namespace

std::vector<std::string> zone_property_corpus() {
  std::vector<std::string> corpus = quartz_examples();
  for (int hour = 0; hour < 24; ++hour) {  // fixed times in every hour a transition may take
    for (int minute : {0, 15, 30, 45}) corpus.push_back(fmt::format("0 {} {} * * ?", minute, hour));
  }
  for (int hour = 0; hour < 24; ++hour) {  // minute steps, weekdays, last second of an hour
    corpus.push_back(fmt::format("0 0/20 {} * * ?", hour));
    corpus.push_back(fmt::format("0 10,40 {} ? * MON-FRI", hour));
    corpus.push_back(fmt::format("59 59 {} * * ?", hour));
  }
  for (int minute : {0, 30}) {  // 30-minute offsets and Lord Howe's half-hour DST
    corpus.push_back(fmt::format("0 {} 0-5 * * ?", minute));
  }
  std::set<std::string> unique(corpus.begin(), corpus.end());
  return {unique.begin(), unique.end()};
}

namespace {

struct Window {
  Time start, end;
};

std::vector<Window> windows_of(const TimeZone& zone, int first_year, int last_year) {
  std::vector<Window> out;
  const Time from = make_time(first_year, 1, 1), to = make_time(last_year + 1, 1, 1);
  for (auto t = zone.next_transition(from); t && t->at < to; t = zone.next_transition(t->at)) {
    out.push_back({t->at - hours(26), t->at + hours(26)});
  }
  for (int year = first_year; year <= last_year; ++year) {  // an ordinary day a year
    out.push_back({make_time(year, 1, 10), make_time(year, 1, 12)});
  }
  return out;
}

// The offsets in force around [start, end), and the gaps' (local start, local end, offset before).
struct Offsets {
  std::set<seconds> all;
  struct Gap {
    Time local_from, local_to;
    seconds before;
  };
  std::vector<Gap> gaps;
};

Offsets offsets_near(const TimeZone& zone, Time start, Time end) {
  Offsets out;
  out.all.insert(zone.at(start - hours(52)).offset);
  for (auto t = zone.next_transition(start - hours(52)); t && t->at < end + hours(52);
       t = zone.next_transition(t->at)) {
    out.all.insert(t->before);
    out.all.insert(t->after);
    if (t->after > t->before) out.gaps.push_back({t->at + t->before, t->at + t->after, t->before});
  }
  return out;
}

// The reference: the slots of [start, end) by the rule, from TimeZone::at() alone.
std::vector<ScheduledTime> reference(const CronExpression& e, const TimeZone& zone, DstRule rule,
                                     Time start, Time end) {
  const Offsets offsets = offsets_near(zone, start, end);
  const bool fixed = is_fixed_time(e);
  std::vector<ScheduledTime> out;
  for (Time local : e.times(start + *offsets.all.begin(), end + *offsets.all.rbegin())) {
    std::vector<Time> valid;
    for (seconds o : offsets.all) {
      if (zone.at(local - o).offset == o) valid.push_back(local - o);
    }
    std::sort(valid.begin(), valid.end());
    if (!fixed || valid.size() == 1) {
      for (Time t : valid) out.push_back({t, DstApplied::kNone});
    } else if (valid.empty()) {
      if (rule.gap == DstGap::kSkip) continue;
      for (const auto& g : offsets.gaps) {
        if (local >= g.local_from && local < g.local_to) {
          out.push_back({local - g.before, DstApplied::kShift});
        }
      }
    } else if (rule.overlap == DstOverlap::kFirst) {
      out.push_back({valid.front(), DstApplied::kFirst});
    } else if (rule.overlap == DstOverlap::kSecond) {
      out.push_back({valid.back(), DstApplied::kSecond});
    } else {
      for (Time t : valid) out.push_back({t, DstApplied::kBoth});
    }
  }
  // One slot per instant; where a shifted time meets a named one, the named one (no rule).
  std::map<Time, DstApplied> by_time;
  for (const auto& s : out) {
    if (s.time < start || s.time >= end) continue;
    auto [it, added] = by_time.emplace(s.time, s.rule);
    if (!added && s.rule == DstApplied::kNone) it->second = s.rule;
  }
  std::vector<ScheduledTime> slots;
  for (const auto& [t, rule_applied] : by_time) slots.push_back({t, rule_applied});
  return slots;
}

// Each slot's local time matches the expression (a shifted one once moved back by its gap).
bool local_times_match(const CronExpression& e, const TimeZone& zone,
                       const std::vector<ScheduledTime>& slots) {
  for (const auto& s : slots) {
    Time local = s.time + zone.at(s.time).offset;
    if (s.rule == DstApplied::kShift) {  // named with the offset before the last transition
      std::optional<ZoneTransition> last;
      for (auto t = zone.next_transition(s.time - hours(52)); t && t->at <= s.time;
           t = zone.next_transition(t->at)) {
        last = t;
      }
      if (!last) return false;
      local = s.time + last->before;
    }
    if (e.next_at_or_after(local) != local) return false;
  }
  return true;
}

std::string describe_slots(const std::vector<ScheduledTime>& slots) {
  std::string out;
  for (const auto& s : slots)
    out += format_time(s.time) + "/" + std::string(to_string(s.rule)) + " ";
  return out;
}

void check_one(const CronExpression& e, const TimeZone& zone, DstRule rule, const Window& w,
               ZonePropertyReport& report) {
  const auto schedule = make_cron_schedule(e, zone, rule);
  auto got = schedule->explain(w.start, w.end, ScheduleContext{});
  ++report.windows;
  if (report.failures.size() >= kMaxFailures) return;
  const auto where = [&] {
    return fmt::format("{} \"{}\" gap={} overlap={} [{}, {})", zone.name(), e.text(),
                       rule.gap == DstGap::kSkip ? "skip" : "shift", static_cast<int>(rule.overlap),
                       format_time(w.start), format_time(w.end));
  };
  if (!got) return report.failures.push_back(where() + ": " + got.error().message);
  report.slots += got->size();
  for (std::size_t i = 1; i < got->size(); ++i) {
    if ((*got)[i - 1].time >= (*got)[i].time) {
      return report.failures.push_back(where() + ": doubled or unordered at " +
                                       format_time((*got)[i].time));
    }
  }
  const auto expected = reference(e, zone, rule, w.start, w.end);
  if (*got != expected) {
    return report.failures.push_back(where() + ": got " + describe_slots(*got) + "expected " +
                                     describe_slots(expected));
  }
  if (!local_times_match(e, zone, *got)) {
    report.failures.push_back(where() + ": a slot's local time does not match the expression");
  }
}

}  // namespace

ZonePropertyReport check_zoned_schedules(const ZonePropertyOptions& options) {
  ZonePropertyReport report;
  std::vector<CronExpression> expressions;
  for (const auto& text : options.expressions) {
    auto e = CronExpression::parse(text);
    if (!e) {
      report.failures.push_back(fmt::format("corpus: {}", e.error().message));
      continue;
    }
    expressions.push_back(std::move(*e));
  }
  const DstRule rules[] = {{DstGap::kShift, DstOverlap::kFirst, true},
                           {DstGap::kSkip, DstOverlap::kSecond, true},
                           {DstGap::kShift, DstOverlap::kBoth, true}};
  for (const auto& name : options.zones) {
    auto zone = TimeZone::load(name);
    if (!zone) {
      report.failures.push_back(zone.error().message);
      continue;
    }
    for (const Window& w : windows_of(*zone, options.first_year, options.last_year)) {
      for (const auto& e : expressions) {
        const bool fixed = is_fixed_time(e);
        for (const DstRule& rule : rules) {
          check_one(e, *zone, rule, w, report);
          if (!fixed) break;  // the rule does not apply to interval expressions
        }
      }
    }
  }
  return report;
}

}  // namespace celos::testing
