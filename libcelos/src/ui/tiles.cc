// Tile arithmetic and state words of the UI grid (SPEC §9).

#include <fmt/format.h>

#include "celos/ui.h"

namespace celos {

using std::chrono::days;
using std::chrono::floor;
using std::chrono::minutes;

Result<minutes> parse_zoom(const std::string* text) {
  if (text == nullptr) return kDefaultZoom;
  const std::string& s = *text;
  std::size_t pos = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (pos == s.size())
    return fail(fmt::format("zoom '{}' is not a number of minutes", s), ErrorCode::kInvalid);
  // Saturate instead of overflowing: "99999999999999999999" is just a very large zoom.
  long long value = 0;
  for (std::size_t i = pos; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') {
      return fail(fmt::format("zoom '{}' is not a number of minutes", s), ErrorCode::kInvalid);
    }
    if (value < 1'000'000) value = value * 10 + (s[i] - '0');
  }
  if (s[0] == '-') value = -value;
  if (value < kMinZoom.count()) return kMinZoom;
  if (value > kMaxZoom.count()) return kMaxZoom;
  return minutes{value};
}

int tile_count(minutes zoom) {
  if (zoom < kMinZoom) zoom = kMinZoom;
  const auto week = minutes{days{7}};
  return static_cast<int>(std::min<long long>(kMaxTiles, week / zoom));
}

TileGrid make_tile_grid(Time time, minutes zoom) {
  if (zoom < kMinZoom) zoom = kMinZoom;
  if (zoom > kMaxZoom) zoom = kMaxZoom;
  const Time midnight = floor<days>(time);
  const auto steps = (time - midnight) / zoom;  // whole tiles since midnight
  const Time newest = midnight + steps * zoom;
  TileGrid grid;
  grid.zoom = zoom;
  const int count = tile_count(zoom);
  grid.starts.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) grid.starts.push_back(newest - i * zoom);
  return grid;
}

std::optional<std::size_t> TileGrid::tile_of(Time t) const {
  if (t < begin() || t >= end()) return std::nullopt;
  const auto k = static_cast<std::size_t>((t - begin()) / zoom);  // from the oldest
  return starts.size() - 1 - k;
}

std::string tile_label(Time start) {
  const CivilTime c = to_civil(start);
  return fmt::format("{:02}{:02}", c.hour, c.minute);
}

std::string day_label(Time start) {
  if (start != floor<days>(start)) return "";
  return fmt::format("{:02}", to_civil(start).day);
}

std::string tile_label(Time start, const TimeZone& zone) {
  const CivilTime c = zone.at(start).local;
  return fmt::format("{:02}{:02}", c.hour, c.minute);
}

std::string day_label(Time start, std::optional<Time> older, const TimeZone& zone) {
  const CivilTime c = zone.at(start).local;
  if (older) {
    const CivilTime o = zone.at(*older).local;
    if (o.year == c.year && o.month == c.month && o.day == c.day) return "";
  } else if (c.hour != 0 || c.minute != 0) {
    return "";
  }
  return fmt::format("{:02}", c.day);
}

std::optional<ZoneTransition> transition_in_day(Time start, const TimeZone& zone) {
  auto t = zone.next_transition(start - std::chrono::milliseconds(1));
  if (t && t->at < start + days(1)) return t;
  return std::nullopt;
}

std::string_view state_word(SlotStatus status) {
  switch (status) {
    case SlotStatus::kWaiting:
      return "wait";
    case SlotStatus::kReady:
      return "rdy";
    case SlotStatus::kRunning:
      return "run";
    case SlotStatus::kSuccess:
      return "";
    case SlotStatus::kFailure:
      return "fail";
    case SlotStatus::kWaitTimeout:
      return "time";
    case SlotStatus::kKilled:
      return "kill";
  }
  return "?";
}

std::string_view state_class(SlotStatus status) {
  switch (status) {
    case SlotStatus::kWaiting:
      return "waiting";
    case SlotStatus::kReady:
      return "ready";
    case SlotStatus::kRunning:
      return "running";
    case SlotStatus::kSuccess:
      return "success";
    case SlotStatus::kFailure:
      return "failure";
    case SlotStatus::kWaitTimeout:
      return "wait_timeout";
    case SlotStatus::kKilled:
      return "killed";
  }
  return "unknown";
}

int state_severity(SlotStatus status) {
  switch (status) {
    case SlotStatus::kSuccess:
      return 0;
    case SlotStatus::kRunning:
      return 1;
    case SlotStatus::kReady:
      return 2;
    case SlotStatus::kWaiting:
      return 3;
    case SlotStatus::kKilled:
      return 4;
    case SlotStatus::kWaitTimeout:
      return 5;
    case SlotStatus::kFailure:
      return 6;
  }
  return 7;
}

namespace {
constexpr std::pair<std::string_view, SlotStatus> kTileStatuses[] = {
    {"WAITING", SlotStatus::kWaiting}, {"READY", SlotStatus::kReady},
    {"RUNNING", SlotStatus::kRunning}, {"SUCCESS", SlotStatus::kSuccess},
    {"FAILURE", SlotStatus::kFailure}, {"WAIT_TIMEOUT", SlotStatus::kWaitTimeout},
    {"KILLED", SlotStatus::kKilled}};
}  // namespace

std::string_view ui_status_name(SlotStatus status) {
  for (const auto& [name, s] : kTileStatuses) {
    if (s == status) return name;
  }
  return "UNKNOWN";
}

Result<SlotStatus> parse_ui_status(std::string_view text) {
  for (const auto& [name, status] : kTileStatuses) {
    if (name == text) return status;
  }
  return fail(fmt::format("unknown slot status '{}'", text), ErrorCode::kCorrupt);
}

}  // namespace celos
