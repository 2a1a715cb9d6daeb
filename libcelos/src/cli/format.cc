// Formatting for people. Colours are ANSI escapes, used only when stdout is a terminal (the
// caller decides), so that pipes and files get plain text.
#include "cli/format.h"

#include <algorithm>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/time.h"
#include "celos/time_zone.h"

namespace celos::cli {

std::string paint(bool on, Color color, std::string_view text) {
  if (!on || color == Color::kNone) return std::string(text);
  const char* code = "";
  switch (color) {
    case Color::kRed:
      code = "31";
      break;
    case Color::kGreen:
      code = "32";
      break;
    case Color::kYellow:
      code = "33";
      break;
    case Color::kBlue:
      code = "34";
      break;
    case Color::kGray:
      code = "90";
      break;
    case Color::kBold:
      code = "1";
      break;
    case Color::kNone:
      break;
  }
  return fmt::format("\033[{}m{}\033[0m", code, text);
}

Color status_color(std::string_view status) {
  if (status == "SUCCESS") return Color::kGreen;
  if (status == "FAILURE" || status == "WAIT_TIMEOUT") return Color::kRed;
  if (status == "RUNNING" || status == "READY") return Color::kBlue;
  if (status == "KILLED") return Color::kYellow;
  if (status == "WAITING") return Color::kGray;
  return Color::kNone;
}

std::size_t display_width(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

void Table::print(std::ostream& out, bool color) const {
  std::vector<std::size_t> widths;
  for (const auto& h : headers_) widths.push_back(display_width(h));
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], display_width(row[i].text));
    }
  }
  auto line = [&](const std::vector<Cell>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size() && i < widths.size(); ++i) {
      text += paint(color, cells[i].color, cells[i].text);
      if (i + 1 < cells.size()) {
        text += std::string(widths[i] - display_width(cells[i].text) + 2, ' ');
      }
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << '\n';
  };
  std::vector<Cell> header;
  for (const auto& h : headers_) header.push_back({h, Color::kBold});
  line(header);
  for (const auto& row : rows_) line(row);
}

std::string show_time(const Globals& globals, std::string_view server_time) {
  auto t = parse_time(server_time);
  if (!t) return std::string(server_time);
  CivilTime c;
  std::string label;
  if (globals.zone) {
    const ZonedTime zoned = globals.zone->at(*t);
    c = zoned.local;
    label = format_offset(zoned.offset);
  } else {
    c = to_civil(*t + globals.tz);
    label = globals.tz_label;
  }
  std::string text =
      fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}", c.year, c.month, c.day, c.hour, c.minute);
  if (c.second != 0 || c.millisecond != 0) text += fmt::format(":{:02}", c.second);
  return text + label;
}

std::string one_line(std::string_view body) {
  boost::system::error_code ec;
  const boost::json::value value = boost::json::parse(body, ec);
  if (!ec) return boost::json::serialize(value);
  std::string text(body.substr(0, 300));
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace celos::cli
