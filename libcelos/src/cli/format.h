// Output of the `celos` command line for people: aligned tables, colours (only on a terminal),
// times in UTC or at the --tz offset.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"

namespace celos::cli {

enum class Color { kNone, kRed, kGreen, kYellow, kBlue, kGray, kBold };

// `text` in colour `color` when `on`, else unchanged.
std::string paint(bool on, Color color, std::string_view text);

// The colour of a slot status (FAILURE red, SUCCESS green, RUNNING blue, ...).
Color status_color(std::string_view status);

struct Cell {
  std::string text;
  Color color = Color::kNone;
};

// Columns padded to their widest cell (counted in characters, not bytes, and without colour
// codes); the last column is not padded. Headers are bold on a terminal.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add(std::vector<Cell> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  void print(std::ostream& out, bool color) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<Cell>> rows_;
};

// A time as the server printed it (2015-09-13T13:00:00.000Z) shown at the --tz offset, or in
// the --tz zone with the offset in force then: 2015-09-13T13:00Z, 2015-09-13T15:00+02:00
// (seconds only when there are any). Text that is not a time is returned unchanged; "" for "".
std::string show_time(const Globals& globals, std::string_view server_time);

// A server's answer on one line: JSON re-serialized compactly, other text with line breaks
// replaced by spaces (cut to 300 bytes).
std::string one_line(std::string_view body);

// Number of characters (UTF-8 code points) of `text`.
std::size_t display_width(std::string_view text);

}  // namespace celos::cli
