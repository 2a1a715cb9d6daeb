// IANA time zones from the system's tzdata (issue 26).
//
// celos keeps every instant in UTC (celos/time.h); a TimeZone only translates between a UTC
// instant and the wall-clock time of a place. The rules come from the operating system's tzdata
// (`/usr/share/zoneinfo`, or `$TZDIR`) through Abseil's time-zone library, which also follows a
// zone's POSIX rule beyond the last transition listed in its file; celos has no zone table of
// its own. The library stays behind this header (an opaque handle), so including it is cheap.
//
// TimeZone is an immutable value, cheap to copy and safe to use from several threads.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "celos/error.h"
#include "celos/time.h"

namespace celos {

// A wall-clock time and the UTC offset in force at one instant in one zone.
struct ZonedTime {
  CivilTime local;              // the local calendar fields (millisecond kept from the instant)
  std::chrono::seconds offset;  // local = UTC + offset
  bool is_dst = false;
  std::string abbreviation;  // "CEST", "+0530"
};

// What a local (wall-clock) time maps to in a zone.
struct LocalTimeMapping {
  enum class Kind {
    kUnique,   // exactly one instant: `first`
    kGap,      // the local time does not exist (clocks jumped over it)
    kOverlap,  // the local time happens twice (clocks were set back)
  };
  Kind kind = Kind::kUnique;
  // kUnique: the instant. kOverlap: the earlier instant (still on the offset before the change,
  // e.g. summer time). kGap: the local time moved later by the length of the gap (java.time's
  // rule: 02:30 on a spring-forward night in Paris is 03:30 local, 01:30Z).
  Time first;
  // kOverlap: the later instant. kUnique and kGap: equal to `first`.
  Time second;
  // kGap and kOverlap: the instant of the transition (the first instant on the new offset).
  Time transition;
};

// One change of a zone's offset.
struct ZoneTransition {
  Time at;                      // the first instant on the new offset
  std::chrono::seconds before;  // offset before
  std::chrono::seconds after;   // offset after
};

class TimeZone {
 public:
  // The zone called `name` ("Europe/Paris", "UTC", "Asia/Kolkata"). An unknown name is an error
  // naming it and the tzdata looked in: `unknown time zone "Europe/Pari" (tzdata 2025b in
  // /usr/share/zoneinfo)`. A fixed offset string such as "+02:00" is not a zone and is refused.
  [[nodiscard]] static Result<TimeZone> load(std::string_view name);
  // UTC, without reading any file.
  static TimeZone utc();

  const std::string& name() const;
  // True for UTC and its aliases (Etc/UTC, Etc/GMT, ...): an offset of zero, for ever.
  bool is_utc() const;

  // The wall-clock time and offset at instant `t`.
  ZonedTime at(Time t) const;
  // The instant(s) a local time maps to (`local.millisecond` is kept).
  LocalTimeMapping from_local(const CivilTime& local) const;
  // The next change of offset strictly after `t`, if any (only real changes of the UTC offset;
  // a change of name or of the DST flag alone is skipped).
  std::optional<ZoneTransition> next_transition(Time t) const;

  friend bool operator==(const TimeZone& a, const TimeZone& b) { return a.name() == b.name(); }

  struct Impl;  // Abseil's handle; defined in the .cc

 private:
  explicit TimeZone(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// The tzdata version in use ("2025b", read from `tzdata.zi` in the zoneinfo directory), or
// "unknown" when the files do not say.
std::string tzdata_version();

// The zoneinfo directory in use: `$TZDIR`, else `/usr/share/zoneinfo`.
std::string tzdata_directory();

// Every zone name the system's tzdata lists (zones and links of `tzdata.zi`), sorted; empty if
// the file is missing.
std::vector<std::string> tzdata_zone_names();

// Called at each reload of the workflows: when the tzdata version on disk differs from the one
// seen last, forgets the zones already loaded (so that the next load() reads the new rules) and
// returns the old and new versions for the log. Returns nothing when nothing changed. Handles
// obtained before keep the rules they were loaded with.
struct TzdataChange {
  std::string before, after;
};
std::optional<TzdataChange> refresh_tzdata();

// `+02:00`, `-03:30`, `+00:00`: an offset as ISO 8601 prints it.
std::string format_offset(std::chrono::seconds offset);
// `2026-03-29T03:30:00+02:00`: a local time with its offset (whole seconds).
std::string format_local_time(const ZonedTime& zoned);

}  // namespace celos
