// Request targets and query strings (SPEC §6, §15): percent decoding never crashes, and the
// UTF-8 checks that guard the JSON answers hold: cesu8_to_utf8 always yields valid UTF-8 and
// leaves valid UTF-8 alone, printable_ascii yields printable ASCII only.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "celos/http_server.h"
#include "celos/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string path;
  std::multimap<std::string, std::string> query;
  if (celos::parse_request_target(text, path, query)) {
    for (const auto& [name, value] : query) {
      if (celos::is_valid_utf8(value) && celos::cesu8_to_utf8(value) != value) __builtin_trap();
    }
  }
  if (!celos::is_valid_utf8(celos::cesu8_to_utf8(text))) __builtin_trap();
  for (const char c : celos::printable_ascii(text)) {
    if (c < 0x20 || c > 0x7e) __builtin_trap();
  }
  return 0;
}
