#include "celos/cron.h"

#include <array>
#include <bit>
#include <bitset>
#include <cctype>
#include <charconv>
#include <chrono>
#include <span>

#include <fmt/format.h>

namespace celos {
namespace {

using namespace std::chrono;

constexpr int kMinYear = 1970;
constexpr int kMaxYear = 2199;
constexpr std::size_t kYearCount = kMaxYear - kMinYear + 1;
constexpr int kMaxNth = 5;  // no month has a sixth Friday

// A set of field values, bit (value - min). 256 bits cover every field, years included.
using Bits = std::bitset<256>;

constexpr std::array<std::string_view, 12> kMonthNames = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                                          "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::array<std::string_view, 7> kDayNames = {"SUN", "MON", "TUE", "WED",
                                                       "THU", "FRI", "SAT"};

struct FieldSpec {
  std::string_view name;
  int min;
  int max;
  std::span<const std::string_view> names;  // names[i] stands for min + i
  bool wraps;                               // `22-2` means 22..max, min..2
};

constexpr FieldSpec kSecond{"second", 0, 59, {}, true};
constexpr FieldSpec kMinute{"minute", 0, 59, {}, true};
constexpr FieldSpec kHour{"hour", 0, 23, {}, true};
constexpr FieldSpec kDayOfMonth{"day-of-month", 1, 31, {}, true};
constexpr FieldSpec kMonth{"month", 1, 12, kMonthNames, true};
constexpr FieldSpec kDayOfWeek{"day-of-week", 1, 7, kDayNames, true};
// A wrapped year range would run past 2199 into 1970: almost certainly a typo, so reject it.
constexpr FieldSpec kYear{"year", kMinYear, kMaxYear, {}, false};

// Values of a bit set shifted into a word: bit v means value v (min is 0 or 1 here).
std::uint64_t to_word(const Bits& bits, int min) {
  std::uint64_t word = 0;
  for (int i = 0; i < 64 - min; ++i) {
    if (bits.test(std::size_t(i))) word |= std::uint64_t{1} << (i + min);
  }
  return word;
}

// The smallest value >= from in `word`, or -1.
int next_bit(std::uint64_t word, int from) {
  if (from >= 64) return -1;
  const std::uint64_t rest = word >> from;
  return rest == 0 ? -1 : from + std::countr_zero(rest);
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

struct CronExpression::Fields {
  std::uint64_t seconds = 0;  // bit v: second v
  std::uint64_t minutes = 0;
  std::uint64_t hours = 0;
  std::uint64_t months = 0;  // bits 1..12

  bool dom_any = false;                // day-of-month is `?`: days come from the day-of-week rules
  std::uint64_t dom = 0;               // plain days, bits 1..31
  bool dom_last = false;               // L
  std::uint64_t dom_last_offsets = 0;  // L-n: bit n
  bool dom_last_weekday = false;       // LW
  std::uint64_t dom_nearest_weekday = 0;  // nW: bit n

  std::uint64_t dow = 0;                             // plain weekdays, bits 1..7 (1 = Sunday)
  std::uint64_t dow_last = 0;                        // nL: bit n
  std::array<std::uint64_t, kMaxNth + 1> dow_nth{};  // n#k: bit n of dow_nth[k]

  std::bitset<kYearCount> years;
};

namespace {

using Fields = CronExpression::Fields;

// Parses one field; every error names the expression and the field.
class FieldParser {
 public:
  FieldParser(std::string_view expr, const FieldSpec& spec, std::string_view text)
      : expr_(expr), spec_(spec), text_(text), upper_(upper(text)) {}

  tl::unexpected<Error> error(std::string_view why) const {
    return fail(
        fmt::format("cron expression \"{}\": {} field \"{}\": {}", expr_, spec_.name, text_, why),
        ErrorCode::kInvalid);
  }

  // The comma-separated items of the field, upper-cased.
  std::vector<std::string_view> items() const {
    std::vector<std::string_view> out;
    std::string_view rest = upper_;
    for (;;) {
      const auto comma = rest.find(',');
      out.push_back(rest.substr(0, comma));
      if (comma == std::string_view::npos) return out;
      rest.remove_prefix(comma + 1);
    }
  }

  Result<int> number(std::string_view token, std::string_view what) const {
    int value = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (token.empty() || ec != std::errc{} || end != token.data() + token.size()) {
      return error(fmt::format("{} \"{}\" is not a number", what, token));
    }
    return value;
  }

  // A value of the field: a number or, for months and days of the week, a name.
  Result<int> value(std::string_view token) const {
    for (std::size_t i = 0; i < spec_.names.size(); ++i) {
      if (token == spec_.names[i]) return spec_.min + int(i);
    }
    if (token.empty() || !std::isdigit(static_cast<unsigned char>(token[0]))) {
      if (spec_.names.empty()) return error(fmt::format("\"{}\" is not a number", token));
      return error(fmt::format("\"{}\" is not a number or a name ({}-{})", token,
                               spec_.names.front(), spec_.names.back()));
    }
    auto v = number(token, "value");
    if (!v) return v;
    if (*v < spec_.min || *v > spec_.max) {
      return error(fmt::format("value {} out of range {}-{}", *v, spec_.min, spec_.max));
    }
    return v;
  }

  // `*`, `a`, `a-b`, each optionally `/step`; `a/step` runs to the maximum.
  Result<void> add_item(std::string_view item, Bits& bits) const {
    if (item.empty()) return error("empty list item");
    const auto slash = item.find('/');
    const std::string_view range = item.substr(0, slash);
    int step = 1;
    if (slash != std::string_view::npos) {
      auto s = number(item.substr(slash + 1), "step");
      if (!s) return tl::unexpected(s.error());
      const int size = spec_.max - spec_.min + 1;
      if (*s < 1 || *s > size) return error(fmt::format("step {} out of range 1-{}", *s, size));
      step = *s;
    }
    int lo = spec_.min, hi = spec_.max;
    if (range == "?") return error("\"?\" must be the whole field");
    if (range != "*") {
      const auto dash = range.find('-');
      auto first = value(range.substr(0, dash));
      if (!first) return tl::unexpected(first.error());
      lo = *first;
      hi = slash == std::string_view::npos ? lo : spec_.max;
      if (dash != std::string_view::npos) {
        auto last = value(range.substr(dash + 1));
        if (!last) return tl::unexpected(last.error());
        hi = *last;
      }
    }
    if (hi < lo && !spec_.wraps) {
      return error(fmt::format("range {}-{} runs backwards", lo, hi));
    }
    const int size = spec_.max - spec_.min + 1;
    const int count = (hi - lo + size) % size + 1;
    for (int i = 0; i < count; i += step) {
      bits.set(std::size_t((lo - spec_.min + i) % size));
    }
    return {};
  }

  Result<Bits> parse_plain() const {
    Bits bits;
    for (std::string_view item : items()) {
      if (auto r = add_item(item, bits); !r) return tl::unexpected(r.error());
    }
    return bits;
  }

  std::string_view upper_text() const { return upper_; }

 private:
  std::string_view expr_;
  const FieldSpec& spec_;
  std::string_view text_;
  std::string upper_;
};

// Day of month: plain items plus `L`, `L-n`, `LW`, `nW`.
Result<void> parse_day_of_month(const FieldParser& p, Fields& f) {
  if (p.upper_text() == "?") {
    f.dom_any = true;
    return {};
  }
  Bits plain;
  for (std::string_view item : p.items()) {
    if (item == "L") {
      f.dom_last = true;
    } else if (item == "LW") {
      f.dom_last_weekday = true;
    } else if (item.starts_with("L-")) {
      auto n = p.number(item.substr(2), "offset");
      if (!n) return tl::unexpected(n.error());
      if (*n < 0 || *n > 30) return p.error(fmt::format("offset L-{} out of range 0-30", *n));
      f.dom_last_offsets |= std::uint64_t{1} << *n;
    } else if (item.size() > 1 && item.ends_with('W')) {
      auto day = p.value(item.substr(0, item.size() - 1));
      if (!day) return tl::unexpected(day.error());
      f.dom_nearest_weekday |= std::uint64_t{1} << *day;
    } else if (auto r = p.add_item(item, plain); !r) {
      return r;
    }
  }
  f.dom = to_word(plain, kDayOfMonth.min);
  return {};
}

// Day of week: plain items plus `L` (Saturday), `nL` and `n#k`.
Result<void> parse_day_of_week(const FieldParser& p, Fields& f) {
  if (p.upper_text() == "?") return {};
  Bits plain;
  for (std::string_view item : p.items()) {
    const auto hash = item.find('#');
    if (item == "L") {
      plain.set(std::size_t(7 - kDayOfWeek.min));
    } else if (item.size() > 1 && item.ends_with('L')) {
      auto day = p.value(item.substr(0, item.size() - 1));
      if (!day) return tl::unexpected(day.error());
      f.dow_last |= std::uint64_t{1} << *day;
    } else if (hash != std::string_view::npos) {
      auto day = p.value(item.substr(0, hash));
      if (!day) return tl::unexpected(day.error());
      auto nth = p.number(item.substr(hash + 1), "occurrence");
      if (!nth) return tl::unexpected(nth.error());
      if (*nth < 1 || *nth > kMaxNth) {
        return p.error(fmt::format("occurrence #{} out of range 1-{}", *nth, kMaxNth));
      }
      f.dow_nth[std::size_t(*nth)] |= std::uint64_t{1} << *day;
    } else if (auto r = p.add_item(item, plain); !r) {
      return r;
    }
  }
  f.dow = to_word(plain, kDayOfWeek.min);
  return {};
}

std::vector<std::string_view> split_fields(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    if (j > i) out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

Result<std::uint64_t> parse_word(std::string_view expr, const FieldSpec& spec,
                                 std::string_view text) {
  auto bits = FieldParser(expr, spec, text).parse_plain();
  if (!bits) return tl::unexpected(bits.error());
  return to_word(*bits, spec.min);
}

Result<Fields> parse_fields(std::string_view expr, const std::vector<std::string_view>& parts) {
  Fields f;
  struct Word {
    const FieldSpec& spec;
    std::string_view text;
    std::uint64_t& out;
  };
  const Word words[] = {{kSecond, parts[0], f.seconds},
                        {kMinute, parts[1], f.minutes},
                        {kHour, parts[2], f.hours},
                        {kMonth, parts[4], f.months}};
  for (const Word& w : words) {
    auto bits = parse_word(expr, w.spec, w.text);
    if (!bits) return tl::unexpected(bits.error());
    w.out = *bits;
  }
  if (auto r = parse_day_of_month(FieldParser(expr, kDayOfMonth, parts[3]), f); !r) {
    return tl::unexpected(r.error());
  }
  const FieldParser dow(expr, kDayOfWeek, parts[5]);
  if (auto r = parse_day_of_week(dow, f); !r) return tl::unexpected(r.error());
  if (f.dom_any == (dow.upper_text() == "?")) {
    return fail(fmt::format("cron expression \"{}\": exactly one of the day-of-month field "
                            "\"{}\" and the day-of-week field \"{}\" must be \"?\"",
                            expr, parts[3], parts[5]),
                ErrorCode::kInvalid);
  }
  if (parts.size() == 7) {
    auto years = FieldParser(expr, kYear, parts[6]).parse_plain();
    if (!years) return tl::unexpected(years.error());
    for (std::size_t i = 0; i < kYearCount; ++i) f.years[i] = years->test(i);
  } else {
    f.years.set();
  }
  return f;
}

// Nearest weekday to `day`, staying inside the month (Quartz `W`).
unsigned nearest_weekday(unsigned day, unsigned last, unsigned weekday_of_day) {
  if (weekday_of_day == 6) return day == 1 ? 3 : day - 1;           // Saturday
  if (weekday_of_day == 0) return day == last ? day - 2 : day + 1;  // Sunday
  return day;
}

constexpr std::uint64_t bit(unsigned n) { return std::uint64_t{1} << n; }

// The shape of one month: its length and the weekday of each day.
struct MonthShape {
  unsigned last;      // number of days
  unsigned first_wd;  // weekday of the 1st, 0 = Sunday
  unsigned weekday_of(unsigned day) const { return (first_wd + day - 1) % 7; }
};

// Days (bits 1..31, possibly beyond the month's end) picked by the day-of-month rules.
std::uint64_t dom_days(const Fields& f, MonthShape m) {
  std::uint64_t mask = f.dom;
  if (f.dom_last) mask |= bit(m.last);
  for (int n = next_bit(f.dom_last_offsets, 0); n >= 0; n = next_bit(f.dom_last_offsets, n + 1)) {
    if (unsigned(n) < m.last) mask |= bit(m.last - unsigned(n));
  }
  if (f.dom_last_weekday) mask |= bit(nearest_weekday(m.last, m.last, m.weekday_of(m.last)));
  for (int d = next_bit(f.dom_nearest_weekday, 1); d >= 0 && unsigned(d) <= m.last;
       d = next_bit(f.dom_nearest_weekday, d + 1)) {
    mask |= bit(nearest_weekday(unsigned(d), m.last, m.weekday_of(unsigned(d))));
  }
  return mask;
}

// Days picked by the day-of-week rules (plain weekdays, nL, n#k).
std::uint64_t dow_days(const Fields& f, MonthShape m) {
  std::uint64_t mask = 0;
  for (unsigned day = 1; day <= m.last; ++day) {
    if ((f.dow >> (m.weekday_of(day) + 1)) & 1) mask |= bit(day);
  }
  for (unsigned q = 1; q <= 7; ++q) {                           // q: Quartz weekday, 1 = Sunday
    const unsigned first_q = 1 + (q - 1 + 7 - m.first_wd) % 7;  // first day that is a q
    if ((f.dow_last >> q) & 1) mask |= bit(first_q + 7 * ((m.last - first_q) / 7));
    for (unsigned k = 1; k <= kMaxNth; ++k) {
      if ((f.dow_nth[k] >> q) & 1) mask |= bit(first_q + 7 * (k - 1));
    }
  }
  return mask;
}

// The days of `ym` (bits 1..31) on which the expression fires. Evaluated per month because
// L, W, # and nL depend on the month's length and on the weekday of its first day.
std::uint64_t day_mask(const Fields& f, year_month ym) {
  const MonthShape m{unsigned((ym / std::chrono::last).day()),
                     weekday{sys_days{ym / 1}}.c_encoding()};
  const std::uint64_t in_month = (bit(m.last + 1) - 1) & ~bit(0);
  return (f.dom_any ? dow_days(f, m) : dom_days(f, m)) & in_month;
}

// The first time of day at or after h:m:s, in seconds since midnight, or -1.
int next_time_of_day(const Fields& f, int h, int m, int s) {
  for (int hour = next_bit(f.hours, h); hour >= 0; hour = next_bit(f.hours, hour + 1)) {
    const int m0 = hour == h ? m : 0;
    for (int minute = next_bit(f.minutes, m0); minute >= 0;
         minute = next_bit(f.minutes, minute + 1)) {
      const int second = next_bit(f.seconds, hour == h && minute == m ? s : 0);
      if (second >= 0) return (hour * 60 + minute) * 60 + second;
    }
  }
  return -1;
}

}  // namespace

CronExpression::CronExpression(std::string text, std::shared_ptr<const Fields> fields)
    : text_(std::move(text)), fields_(std::move(fields)) {}

Result<CronExpression> CronExpression::parse(std::string_view text) {
  const std::vector<std::string_view> parts = split_fields(text);
  if (parts.size() != 6 && parts.size() != 7) {
    return fail(fmt::format("cron expression \"{}\": expected 6 or 7 fields (second minute hour "
                            "day-of-month month day-of-week [year]), found {}",
                            text, parts.size()),
                ErrorCode::kInvalid);
  }
  auto fields = parse_fields(text, parts);
  if (!fields) return tl::unexpected(fields.error());
  return CronExpression(std::string(text), std::make_shared<const Fields>(*fields));
}

std::optional<Time> CronExpression::next_at_or_after(Time t) const {
  static const Time kFirst = make_time(kMinYear, 1, 1);
  static const Time kEnd = make_time(kMaxYear + 1, 1, 1);
  if (t >= kEnd) return std::nullopt;
  if (t < kFirst) t = kFirst;
  const Fields& f = *fields_;
  const CivilTime c = to_civil(ceil<seconds>(t));
  // Search field by field: the lower bounds of c apply only while we are still on c's date.
  for (int year = c.year; year <= kMaxYear; ++year) {
    if (!f.years.test(std::size_t(year - kMinYear))) continue;
    for (int month = year == c.year ? c.month : 1; month <= 12; ++month) {
      if (((f.months >> month) & 1) == 0) continue;
      const bool start_month = year == c.year && month == c.month;
      std::uint64_t days =
          day_mask(f, std::chrono::year{year} / std::chrono::month{unsigned(month)});
      if (start_month) days &= ~((std::uint64_t{1} << c.day) - 1);
      for (int day = next_bit(days, 0); day >= 0; day = next_bit(days, day + 1)) {
        const bool start_day = start_month && day == c.day;
        const int tod = start_day ? next_time_of_day(f, c.hour, c.minute, c.second)
                                  : next_time_of_day(f, 0, 0, 0);
        if (tod >= 0) return make_time(year, month, day) + seconds{tod};
      }
    }
  }
  return std::nullopt;
}

std::uint64_t CronExpression::max_firings_per_day() const {
  return std::uint64_t(std::popcount(fields_->seconds)) *
         std::uint64_t(std::popcount(fields_->minutes)) *
         std::uint64_t(std::popcount(fields_->hours));
}

std::vector<Time> CronExpression::times(Time start, Time end) const {
  std::vector<Time> out;
  for (auto t = next_at_or_after(start); t && *t < end; t = next_at_or_after(*t + seconds{1})) {
    out.push_back(*t);
  }
  return out;
}

}  // namespace celos
