#include "io/json_lines.h"

#include <spdlog/spdlog.h>

namespace celos {

void add_json_line(std::string& data, std::string_view line) {
  if (data.empty()) data += '\n';
  data += line;
  data += '\n';
}

std::size_t for_each_json_line(std::string_view text, std::string_view what,
                               const std::function<Result<void>(std::string_view)>& take) {
  std::size_t skipped = 0, line_number = 0;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    ++line_number;
    if (line.empty()) continue;
    if (auto taken = take(line); !taken) {
      spdlog::warn("{}: skipping line {}: {}", what, line_number, taken.error().message);
      ++skipped;
    }
  }
  return skipped;
}

}  // namespace celos
