#include "celos/time.h"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace celos {
namespace {

using namespace std::chrono;

// Reads exactly `n` digits at `pos`, or -1.
int read_digits(std::string_view s, std::size_t pos, std::size_t n) {
  if (pos + n > s.size()) return -1;
  int value = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return -1;
    value = value * 10 + (s[i] - '0');
  }
  return value;
}

tl::unexpected<Error> bad_time(std::string_view text, std::string_view why) {
  return fail(fmt::format("invalid time \"{}\": {} (expected UTC ISO 8601 such as "
                          "2015-09-13T13:40Z or 2015-09-13T13:40:00.000Z)",
                          text, why),
              ErrorCode::kInvalid);
}

}  // namespace

Result<Time> parse_time(std::string_view text) {
  // yyyy-mm-ddThh:mm[:ss[.fff]](Z|+00:00)
  const std::string_view s = text;
  int year = read_digits(s, 0, 4), month = read_digits(s, 5, 2), day = read_digits(s, 8, 2);
  if (year < 0 || month < 0 || day < 0 || s.size() < 16 || s[4] != '-' || s[7] != '-' ||
      (s[10] != 'T' && s[10] != 't')) {
    return bad_time(text, "not a date and time");
  }
  int hour = read_digits(s, 11, 2), minute = read_digits(s, 14, 2);
  if (hour < 0 || minute < 0 || s[13] != ':') return bad_time(text, "bad hour or minute");
  std::size_t pos = 16;
  int second = 0, millis = 0;
  if (pos < s.size() && s[pos] == ':') {
    second = read_digits(s, pos + 1, 2);
    if (second < 0) return bad_time(text, "bad seconds");
    pos += 3;
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      std::size_t digits = 0;
      int scale = 100;
      while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
        if (digits < 3) millis += (s[pos] - '0') * scale, scale /= 10;
        ++pos, ++digits;
      }
      if (digits == 0) return bad_time(text, "bad fraction of a second");
    }
  }
  const std::string_view zone = s.substr(pos);
  if (zone.empty()) return bad_time(text, "no time zone: times must be UTC (Z)");
  // " 00:00" is "+00:00" after form decoding turned the unencoded '+' of a query into a space.
  if (zone != "Z" && zone != "z" && zone != "+00:00" && zone != "+0000" && zone != "-00:00" &&
      zone != " 00:00") {
    return bad_time(text, fmt::format("time zone \"{}\" is not UTC", zone));
  }
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) {
    return bad_time(text, "field out of range");
  }
  const year_month_day ymd{std::chrono::year{year}, std::chrono::month{unsigned(month)},
                           std::chrono::day{unsigned(day)}};
  if (!ymd.ok()) return bad_time(text, "no such day");
  return make_time(year, month, day, hour, minute, second, millis);
}

Time make_time(int year, int month, int day, int hour, int minute, int second, int millisecond) {
  const sys_days days{std::chrono::year{year} / std::chrono::month{unsigned(month)} /
                      std::chrono::day{unsigned(day)}};
  return Time{days} + hours{hour} + minutes{minute} + seconds{second} + milliseconds{millisecond};
}

CivilTime to_civil(Time t) {
  const sys_days days = floor<std::chrono::days>(t);
  const year_month_day ymd{days};
  auto rest = t - days;
  const auto h = duration_cast<hours>(rest);
  rest -= h;
  const auto m = duration_cast<minutes>(rest);
  rest -= m;
  const auto sec = duration_cast<seconds>(rest);
  rest -= sec;
  return CivilTime{
      int(ymd.year()), int(unsigned(ymd.month())), int(unsigned(ymd.day())), int(h.count()),
      int(m.count()),  int(sec.count()),           int(rest.count())};
}

std::string format_time(Time t) {
  const CivilTime c = to_civil(t);
  if (c.year < 0 || c.year > 9999) {
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", c.year, c.month, c.day, c.hour,
                       c.minute, c.second, c.millisecond);
  }
  // By hand, a third of fmt's time: every answer of the API and every line of a simulation's
  // timeline formats times (5 % of a simulated step's serial part went here).
  std::string out = "0000-00-00T00:00:00.000Z";
  const auto put = [&out](std::size_t at, int value, int digits) {
    for (int i = digits - 1; i >= 0; --i, value /= 10)
      out[at + std::size_t(i)] = char('0' + value % 10);
  };
  put(0, c.year, 4);
  put(5, c.month, 2);
  put(8, c.day, 2);
  put(11, c.hour, 2);
  put(14, c.minute, 2);
  put(17, c.second, 2);
  put(20, c.millisecond, 3);
  return out;
}

std::string format_time_short(Time t) {
  const CivilTime c = to_civil(t);
  const std::string minutes =
      fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}", c.year, c.month, c.day, c.hour, c.minute);
  if (c.millisecond != 0) return fmt::format("{}:{:02}.{:03}Z", minutes, c.second, c.millisecond);
  if (c.second != 0) return fmt::format("{}:{:02}Z", minutes, c.second);
  return minutes + "Z";
}

std::string format_day(Time t) {
  const CivilTime c = to_civil(t);
  return fmt::format("{:04}-{:02}-{:02}", c.year, c.month, c.day);
}

std::string format_time_of_day(Time t) {
  const CivilTime c = to_civil(t);
  return fmt::format("{:02}:{:02}:{:02}.{:03}Z", c.hour, c.minute, c.second, c.millisecond);
}

std::string replace_time_variables(std::string_view text, Time t) {
  if (text.find("${") == std::string_view::npos) return std::string(text);
  const CivilTime c = to_civil(t);
  struct Var {
    std::string_view name;
    std::string value;
  };
  const Var vars[] = {
      {"${year}", fmt::format("{:04}", c.year)},     {"${month}", fmt::format("{:02}", c.month)},
      {"${day}", fmt::format("{:02}", c.day)},       {"${hour}", fmt::format("{:02}", c.hour)},
      {"${minute}", fmt::format("{:02}", c.minute)}, {"${second}", fmt::format("{:02}", c.second)}};
  std::string out;
  out.reserve(text.size() + 16);
  std::size_t i = 0;
  while (i < text.size()) {
    bool replaced = false;
    if (text[i] == '$') {
      for (const Var& v : vars) {
        if (text.substr(i, v.name.size()) == v.name) {
          out += v.value;
          i += v.name.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

Time floor_seconds(Time t) { return floor<seconds>(t); }

}  // namespace celos
