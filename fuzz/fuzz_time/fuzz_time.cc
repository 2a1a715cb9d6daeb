// Time parsing (SPEC §2): never crashes, and an accepted time prints to a text that parses back
// to the same time.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "celos/time.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto time = celos::parse_time(text);
  if (!time) return 0;
  auto again = celos::parse_time(celos::format_time(*time));
  if (!again || *again != *time) __builtin_trap();
  return 0;
}
