// Cron expressions (SPEC §3, Quartz syntax): parsing never crashes, and an accepted expression
// computes firing times that are ascending and at or after the start.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "celos/cron.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto expression = celos::CronExpression::parse(text);
  if (!expression) return 0;
  const celos::Time start = celos::make_time(2015, 9, 13, 13, 7, 11);
  auto next = expression->next_at_or_after(start);
  if (next && *next < start) __builtin_trap();
  celos::Time previous = start - std::chrono::seconds(1);
  for (celos::Time t : expression->times(start, start + std::chrono::hours(48))) {
    if (t <= previous || t < start) __builtin_trap();
    previous = t;
  }
  return 0;
}
