// IANA time zones through Abseil (see celos/time_zone.h). Abseil rather than Howard Hinnant's
// `date` because Debian builds `date` to read the OS zone files without their POSIX footer:
// after a zone's last listed transition (2037 in Debian's files) it stops changing offsets,
// and it cannot tell the tzdata version. Abseil follows the footer rule for ever.
#include "celos/time_zone.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include <absl/time/civil_time.h>
#include <absl/time/internal/cctz/src/time_zone_impl.h>
#include <absl/time/time.h>
#include <fmt/format.h>

namespace celos {

struct TimeZone::Impl {
  std::string name;
  absl::TimeZone zone;
  bool is_utc = false;
};

namespace {

absl::Time to_absl(Time t) { return absl::FromUnixMillis(t.time_since_epoch().count()); }

Time from_absl(absl::Time t) { return Time{std::chrono::milliseconds{absl::ToUnixMillis(t)}}; }

absl::CivilSecond to_absl_civil(const CivilTime& c) {
  return absl::CivilSecond(c.year, c.month, c.day, c.hour, c.minute, c.second);
}

// tzdata names are path segments of letters, digits, `_`, `-` and `+` ("America/Argentina/
// Buenos_Aires", "Etc/GMT+5"). Abseil would also accept an absolute path, "localtime" (the
// host's zone) and "Fixed/UTC+02:00": none of those is an IANA zone, and a workflow must not
// depend on the host's settings.
bool is_zone_name(std::string_view name) {
  if (name.empty() || name.size() > 255 || name.front() == '/' || name.back() == '/') return false;
  if (name == "localtime" || name.starts_with("Fixed/")) return false;
  if (name.find("..") != std::string_view::npos || name.find("//") != std::string_view::npos) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
           c == '_' || c == '-' || c == '+';
  });
}

// A zone that never changes its offset and has offset 0: UTC and its many aliases.
bool never_leaves_utc(const absl::TimeZone& zone) {
  absl::TimeZone::CivilTransition transition;
  return !zone.NextTransition(absl::InfinitePast(), &transition) &&
         zone.At(absl::UnixEpoch()).offset == 0;
}

std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

Result<TimeZone> TimeZone::load(std::string_view name) {
  auto unknown = [&] {
    return fail(fmt::format("unknown time zone \"{}\" (tzdata {} in {})", name, tzdata_version(),
                            tzdata_directory()),
                ErrorCode::kInvalid);
  };
  if (!is_zone_name(name)) return unknown();
  auto impl = std::make_shared<Impl>();
  impl->name = std::string(name);
  if (!absl::LoadTimeZone(impl->name, &impl->zone)) return unknown();
  impl->is_utc = never_leaves_utc(impl->zone);
  return TimeZone(std::move(impl));
}

TimeZone TimeZone::utc() {
  static const auto impl = std::make_shared<const Impl>(Impl{"UTC", absl::UTCTimeZone(), true});
  return TimeZone(impl);
}

const std::string& TimeZone::name() const { return impl_->name; }

bool TimeZone::is_utc() const { return impl_->is_utc; }

ZonedTime TimeZone::at(Time t) const {
  const auto info = impl_->zone.At(to_absl(t));
  const auto& cs = info.cs;
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(
      absl::ToChronoNanoseconds(info.subsecond));
  ZonedTime out;
  out.local = CivilTime{
      static_cast<int>(cs.year()),     cs.month(), cs.day(), cs.hour(), cs.minute(), cs.second(),
      static_cast<int>(millis.count())};
  out.offset = std::chrono::seconds{info.offset};
  out.is_dst = info.is_dst;
  out.abbreviation = info.zone_abbr;
  return out;
}

LocalTimeMapping TimeZone::from_local(const CivilTime& local) const {
  const auto info = impl_->zone.At(to_absl_civil(local));
  const auto millis = std::chrono::milliseconds{local.millisecond};
  LocalTimeMapping out;
  out.transition = from_absl(info.trans) + millis;
  switch (info.kind) {
    case absl::TimeZone::TimeInfo::UNIQUE:
      out.kind = LocalTimeMapping::Kind::kUnique;
      out.first = out.second = from_absl(info.pre) + millis;
      break;
    case absl::TimeZone::TimeInfo::SKIPPED:
      // `pre` applies the offset before the change: the later of the two candidates, i.e. the
      // local time moved on by the length of the gap.
      out.kind = LocalTimeMapping::Kind::kGap;
      out.first = out.second = from_absl(info.pre) + millis;
      out.transition = from_absl(info.trans);
      break;
    case absl::TimeZone::TimeInfo::REPEATED:
      out.kind = LocalTimeMapping::Kind::kOverlap;
      out.first = from_absl(info.pre) + millis;
      out.second = from_absl(info.post) + millis;
      out.transition = from_absl(info.trans);
      break;
  }
  return out;
}

std::optional<ZoneTransition> TimeZone::next_transition(Time t) const {
  absl::Time cursor = to_absl(t);
  absl::TimeZone::CivilTransition civil;
  while (impl_->zone.NextTransition(cursor, &civil)) {
    const absl::Time at = impl_->zone.At(civil.to).trans;
    const auto before = std::chrono::seconds{impl_->zone.At(at - absl::Seconds(1)).offset};
    const auto after = std::chrono::seconds{impl_->zone.At(at).offset};
    if (after != before) return ZoneTransition{from_absl(at), before, after};
    cursor = at;
  }
  return std::nullopt;
}

std::string tzdata_directory() {
  const char* dir = std::getenv("TZDIR");
  return dir != nullptr && *dir != '\0' ? std::string(dir) : std::string("/usr/share/zoneinfo");
}

std::string tzdata_version() {
  // tzdata.zi starts with "# version 2025b".
  const std::string line = first_line_of(tzdata_directory() + "/tzdata.zi");
  constexpr std::string_view kPrefix = "# version ";
  if (!line.starts_with(kPrefix) || line.size() == kPrefix.size()) return "unknown";
  return line.substr(kPrefix.size());
}

std::vector<std::string> tzdata_zone_names() {
  // "Z Europe/Paris 0:9:21 - LMT 1891 Mar 16" and "L Europe/Paris Europe/Monaco".
  std::ifstream in(tzdata_directory() + "/tzdata.zi");
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind, first, second;
    words >> kind >> first >> second;
    if (kind == "Z" && !first.empty()) names.push_back(first);
    if (kind == "L" && !second.empty()) names.push_back(second);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::optional<TzdataChange> refresh_tzdata() {
  static std::mutex mutex;
  static std::string seen = tzdata_version();
  const std::string now = tzdata_version();
  std::lock_guard lock(mutex);
  if (now == seen) return std::nullopt;
  TzdataChange change{seen, now};
  seen = now;
  // Abseil caches every zone it loaded for the life of the process; this (test-only by name,
  // but safe: the old rules stay alive for handles already given out) makes the next load read
  // the new files. It leaks the old zones once per tzdata update, which is rare.
  absl::time_internal::cctz::time_zone::Impl::ClearTimeZoneMapTestOnly();
  return change;
}

std::string format_offset(std::chrono::seconds offset) {
  const char sign = offset.count() < 0 ? '-' : '+';
  const auto total = std::abs(offset.count());
  const auto h = total / 3600, m = total / 60 % 60, s = total % 60;
  if (s != 0) return fmt::format("{}{:02}:{:02}:{:02}", sign, h, m, s);
  return fmt::format("{}{:02}:{:02}", sign, h, m);
}

std::string format_local_time(const ZonedTime& zoned) {
  const auto& l = zoned.local;
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{}", l.year, l.month, l.day, l.hour,
                     l.minute, l.second, format_offset(zoned.offset));
}

}  // namespace celos
