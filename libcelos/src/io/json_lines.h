// JSON lines (private to libcelos/src/io): the append-only files of the file state database
// (slot history, announced dataset instances) hold one JSON object a line, and --import-db reads
// them back. The one rule both sides share: each append starts on a new line, so that a line
// torn by a crash mid-append never swallows the next append's first line; readers skip the
// empty lines and the lines that do not parse (the torn ones), with a warning.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "celos/error.h"

namespace celos {

// Adds `line` (one JSON object, no newline) to `data`, the bytes of one append to one file:
// the first line of an append is preceded by '\n'.
void add_json_line(std::string& data, std::string_view line);

// Calls `take` with each non-empty line of `text`, in order. A line `take` refuses (an error:
// torn by a crash, or corrupt) is skipped with a warning "<what>: skipping line <n>: <why>"
// (lines counted from 1); returns how many were skipped.
std::size_t for_each_json_line(std::string_view text, std::string_view what,
                               const std::function<Result<void>(std::string_view)>& take);

}  // namespace celos
