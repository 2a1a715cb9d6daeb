// UTC time values (SPEC §2).
//
// celos::Time is a UTC instant with millisecond resolution. Slot times are whole seconds;
// `now` is not rounded. Everything is UTC: no local time zone is ever consulted.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "celos/error.h"

namespace celos {

using Time = std::chrono::sys_time<std::chrono::milliseconds>;
using Seconds = std::chrono::seconds;

// Parses ISO 8601 UTC: `2015-09-13T13:40Z`, `2015-09-13T13:40:00Z`, `2015-09-13T13:40:00.000Z`,
// `2015-09-13T13:40:00+00:00` (also `%3A`-style URL-encoded input, after decoding by the caller).
// Other offsets and zone-less times are errors whose message quotes the input.
[[nodiscard]] Result<Time> parse_time(std::string_view text);

// `2015-09-13T13:40:00.000Z`.
std::string format_time(Time t);

// `2015-09-13T13:40Z` (the short form used in celosWorkflowName and Slurm job names); with
// seconds (`2015-09-13T13:40:07Z`) only when the time has any (SPEC §16).
std::string format_time_short(Time t);

// `2015-09-13` and `13:40:00.000Z`: the two path components of the state database (SPEC §5).
std::string format_day(Time t);
std::string format_time_of_day(Time t);

// Builds a time from UTC calendar fields (month 1-12, day 1-31). No validation beyond chrono's.
Time make_time(int year, int month, int day, int hour = 0, int minute = 0, int second = 0,
               int millisecond = 0);

// Calendar fields of a time, UTC.
struct CivilTime {
  int year, month, day, hour, minute, second, millisecond;
};
CivilTime to_civil(Time t);

// Replaces ${year} ${month} ${day} ${hour} ${minute} ${second} with the zero-padded fields of
// `t` (4,2,2,2,2,2 digits). Other `${...}` text is left as is.
std::string replace_time_variables(std::string_view text, Time t);

// Rounds down to a whole second.
Time floor_seconds(Time t);

}  // namespace celos
