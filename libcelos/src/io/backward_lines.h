// Reading a text file from its end (private to libcelos/src/io): the audit trail's newest
// records are at the end of a file that may be hundreds of megabytes long.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "celos/error.h"

namespace celos {

// Calls `line` with each non-empty line of `path`, the last first, reading `block` bytes at a
// time backwards from the end; stops when `line` returns false. Memory stays within a block
// plus the longest line kept: a line longer than `max_line` bytes is skipped. A missing file
// has no lines; another failure to open or read is an error naming the file and the reason.
[[nodiscard]] Result<void> for_each_line_backwards(
    const std::string& path, const std::function<bool(std::string_view)>& line,
    std::size_t max_line = std::size_t{1} << 20, std::size_t block = std::size_t{64} << 10);

}  // namespace celos
