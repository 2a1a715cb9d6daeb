// Quartz cron expressions, evaluated in UTC (SPEC §3).
//
// Six or seven fields: `sec min hour day-of-month month day-of-week [year]`, with `*`, `?`,
// ranges `a-b` (wrap-around allowed: `22-2`, `FRI-MON`), lists `a,b`, steps `a/n` and `a-b/n`,
// `L` (last day of month / last given weekday `5L`), `L-n` (n days before the last day),
// `W` (nearest weekday `15W`), `LW`, `#` (`6#3`: third Friday), month names JAN-DEC and day
// names SUN-SAT (1 = Sunday ... 7 = Saturday). Exactly one of day-of-month / day-of-week must be
// `?`. Years 1970-2199.
//
// CronExpression is an immutable value; it is safe to use from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "celos/error.h"
#include "celos/time.h"

namespace celos {

class CronExpression {
 public:
  // Parses an expression; the error message names the field that is wrong, e.g.
  // `cron expression "0 0 25 * * ?": hour field "25": value 25 out of range 0-23`.
  [[nodiscard]] static Result<CronExpression> parse(std::string_view text);

  // The first firing time at or after `t` (t is rounded up to a whole second), or nothing if
  // the expression never fires again (e.g. its years are over).
  std::optional<Time> next_at_or_after(Time t) const;

  // All firing times in [start, end), ascending.
  std::vector<Time> times(Time start, Time end) const;

  // How many times the expression fires on a day it fires at all (seconds x minutes x hours):
  // the bound of its density, whatever its day fields say.
  std::uint64_t max_firings_per_day() const;

  const std::string& text() const { return text_; }

  // Bit sets of the allowed values of each field plus the special day rules; public only so
  // that the .cc can build it. Not part of the API.
  struct Fields;

  CronExpression(std::string text, std::shared_ptr<const Fields> fields);

 private:
  std::string text_;
  std::shared_ptr<const Fields> fields_;
};

}  // namespace celos
