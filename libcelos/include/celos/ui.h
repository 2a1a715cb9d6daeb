// celos-ui (SPEC §9): a server-rendered HTML grid of workflows × time tiles, read from
// celos-server's API.
//
// Three layers, each usable alone:
//   * tile arithmetic (TileGrid, parse_zoom): pure functions of time values, UTC;
//   * rendering (render_ui_page): a pure function from already-read data to HTML, where every
//     string that came from celos-server or the config file is HTML-escaped;
//   * the HTTP side (CelosApiReader, make_ui_handler): reads celos-server through an HttpClient
//     and answers /ui, /rerun and /trigger-status. The handler is a plain function (see
//     http_server.h), so it is tested with a FakeHttpClient and no sockets.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "celos/clock.h"
#include "celos/error.h"
#include "celos/http_client.h"
#include "celos/http_server.h"
#include "celos/slot.h"
#include "celos/time.h"
#include "celos/time_zone.h"

namespace celos {

// ---------------------------------------------------------------------------------------------
// Tiles

inline constexpr std::chrono::minutes kDefaultZoom{60};
inline constexpr std::chrono::minutes kMinZoom{1};
inline constexpr std::chrono::minutes kMaxZoom{1440};
inline constexpr int kMaxTiles = 48;

// The `zoom` query parameter: absent -> 60 minutes; an integer (optionally signed) -> clamped to
// [1, 1440]; anything else (empty, "abc", "1.5", "60m") -> Error kInvalid (HTTP 400).
[[nodiscard]] Result<std::chrono::minutes> parse_zoom(const std::string* text);

// Number of tiles shown at a zoom: at most 48 and at most 7 days' worth (7 at 1440).
int tile_count(std::chrono::minutes zoom);

// The columns of the grid. Tiles are `zoom` minutes long and aligned to UTC midnight: the newest
// tile starts at the latest `midnight + k * zoom` that is <= `time`; older tiles follow in steps
// of `zoom` (so with a zoom that does not divide a day, tiles of earlier days are not aligned to
// those days' midnights).
struct TileGrid {
  std::chrono::minutes zoom{kDefaultZoom};
  std::vector<Time> starts;  // newest first; never empty

  // Oldest tile start, and the end of the newest tile (exclusive).
  Time begin() const { return starts.back(); }
  Time end() const { return starts.front() + zoom; }
  // The index into `starts` of the tile holding `t`, or nullopt outside [begin, end).
  std::optional<std::size_t> tile_of(Time t) const;
};

TileGrid make_tile_grid(Time time, std::chrono::minutes zoom);

// `HHmm` of a tile start, and the day of month (`02`) when it starts at midnight, else "".
std::string tile_label(Time start);
std::string day_label(Time start);
// The same in a zone (`/ui?tz=Europe/Paris`, issue 26): the local HHmm, and the local day of
// month on the first tile of each local day (`older`: the tile before it, if any).
std::string tile_label(Time start, const TimeZone& zone);
std::string day_label(Time start, std::optional<Time> older, const TimeZone& zone);
// The zone's change of offset inside [start, start + 1 day), if any: the DST mark of a day.
std::optional<ZoneTransition> transition_in_day(Time start, const TimeZone& zone);

// ---------------------------------------------------------------------------------------------
// States

// The word shown for a lone slot: wait, rdy, run, fail, time, kill, and "" for success.
std::string_view state_word(SlotStatus status);
// The CSS class of a state: waiting, ready, running, success, failure, wait_timeout, killed.
std::string_view state_class(SlotStatus status);
// Severity for colouring a tile of several slots; the highest wins. Order (worst first):
// FAILURE > WAIT_TIMEOUT > KILLED > WAITING > READY > RUNNING > SUCCESS: what needs a human
// first, then what is furthest from done.
int state_severity(SlotStatus status);
// "WAITING", "READY", ... as celos-server sends them, and back. (The UI keeps its own copy of
// this mapping so that an unknown status from a newer server is an error of one workflow.)
[[nodiscard]] Result<SlotStatus> parse_ui_status(std::string_view text);
std::string_view ui_status_name(SlotStatus status);

// ---------------------------------------------------------------------------------------------
// Data read from celos-server and the config file

struct UiSlot {
  Time time;
  SlotStatus status = SlotStatus::kWaiting;
  std::optional<std::string> external_id;
  int retry_count = 0;
  std::optional<std::string> backfill;  // the backfill plan that owns it (issue 29)
};

// A backfill plan as the page shows it (issue 29): a progress bar over its slots and its ETA.
struct UiBackfill {
  std::string id;
  std::string state;  // running, paused
  std::size_t total = 0;
  std::size_t ended = 0;    // SUCCESS, FAILURE, WAIT_TIMEOUT, KILLED
  std::size_t running = 0;  // RUNNING
  std::string start, end;
  std::optional<std::string> eta;
};
// The running and paused plans of a GET /api/v1/backfills answer; nothing when it does not
// parse (an older celos-server: the page works without the bars).
std::vector<UiBackfill> parse_ui_backfills(std::string_view json);
// The bars, one <div class="backfill"> each, for the top of the page ("" for none).
std::string render_ui_backfills(const std::vector<UiBackfill>& backfills);

struct UiWorkflow {
  std::string id;
  bool paused = false;
  std::vector<UiSlot> slots;         // any order
  std::optional<std::string> error;  // its slots could not be read: shown in its row
};

// A slot whose deadline is at risk or missed (GET /api/v1/deadlines), listed above the grid.
struct UiDeadline {
  std::string workflow;
  Time time{};
  Time deadline{};
  DeadlineState state = DeadlineState::kAtRisk;
  std::string reason;
};

struct UiGroup {
  std::string name;
  std::vector<std::string> workflows;
};

struct UiConfig {
  std::vector<UiGroup> groups;
};

// `{"groups": [{"name": "...", "workflows": ["a", "b"]}]}`; errors are kInvalid with a message
// that says what is wrong.
[[nodiscard]] Result<UiConfig> parse_ui_config(std::string_view json);

// ---------------------------------------------------------------------------------------------
// Rendering

struct UiPage {
  Time time;  // the time asked for (shown in the corner)
  TileGrid grid;
  UiConfig config;                    // empty: every workflow is "Unlisted workflows"
  std::vector<UiWorkflow> workflows;  // every workflow celos-server knows, sorted by id
  std::string hue_url;                // "" = no links to Hue
  std::string notice;                 // shown above the grid when not empty (config problems)
  // celos-server's maintenance mode when not "off" (SPEC §13): a banner above the grid, e.g.
  // "drain: OS patching (since 2015-09-13T13:00:00.000Z)".
  std::string maintenance;
  // Running and paused backfill plans: a progress bar each, above the grid.
  std::vector<UiBackfill> backfills;
  // SPEC §16: `filter=` (case-insensitive substring of workflow ids; "" = all) and
  // `refresh=SECONDS` (0 = off). Both are kept by the navigation links; the filter also
  // hides listed workflows that do not match (and groups left empty).
  std::string filter;
  int refresh_seconds = 0;
  bool fixed_time = false;  // `time=` was given: the filter form keeps it
  // `tz=` (issue 26): the zone the times are shown in (default UTC); days with a change of
  // offset are marked. Kept by the navigation links.
  TimeZone zone = TimeZone::utc();
  bool zone_given = false;
  // The slots whose deadline is at risk or missed, by deadline (issue 27): listed above the
  // grid, and a mark on their tiles.
  std::vector<UiDeadline> deadlines;
};

// `refresh`: absent or "0" -> 0 (off); a whole number of seconds from 5 to 3600; anything
// else -> Error kInvalid (HTTP 400) that says what is allowed.
inline constexpr int kMinRefreshSeconds = 5;
inline constexpr int kMaxRefreshSeconds = 3600;
[[nodiscard]] Result<int> parse_refresh(const std::string* text);

// True when `filter` is empty or a case-insensitive (ASCII) substring of `workflow_id`.
bool workflow_matches_filter(std::string_view workflow_id, std::string_view filter);

// Drops the workflows (and config entries) that do not match `page.filter`; groups left empty
// are dropped too. Called before rendering.
void apply_filter(UiPage& page);

// Text safe inside HTML elements and double-quoted attributes.
std::string html_escape(std::string_view text);

// The whole HTML page: navigation links, the day header row, the tile label row, then per group
// a heading row and one row per workflow (listed-but-unknown ones marked missing, paused ones
// marked paused), then the "Unlisted workflows" group; above the grid the filter box, the
// (hidden) range bar and the (empty) details panel. Includes the small scripts for shift-click
// rerun, lazy trigger-status tooltips, details on click (fetched from /slot), range rerun
// preview and confirm, and the auto-refresh. Call apply_filter() first to filter.
std::string render_ui_page(const UiPage& page);

// A small readable HTML error page (celos-server down, bad parameter).
std::string render_error_page(int status, std::string_view title, std::string_view message);

// ---------------------------------------------------------------------------------------------
// Reading celos-server

// Reads celos-server's API. Thread-safe.
//
// Prefers the batch endpoint `GET /multi-workflow-slots?start=S&end=E` (every workflow in one
// answer; see docs/ui.md for its contract); when celos-server answers it with 404/405 it falls
// back, for a minute, to `GET /workflow-list` plus one `GET /workflow-slots` per workflow,
// `parallelism` at a time.
class CelosApiReader {
 public:
  // `clock` times the minute before the batch is tried again. Not owned.
  CelosApiReader(std::shared_ptr<HttpClient> client, std::string celos_url, int parallelism = 8,
                 Clock& clock = system_clock());

  // Every workflow with its slots in [start, end), sorted by id. Fails (kFailed) when
  // celos-server cannot be reached or its workflow list cannot be read; a failure of one
  // workflow's slots is only recorded in that workflow's `error`.
  [[nodiscard]] Result<std::vector<UiWorkflow>> read(Time start, Time end);

  // POST /rerun then GET /slot-state: the slot's new state. celos-server's 400/404 come back as
  // kInvalid/kNotFound with its message; transport failures as kFailed.
  [[nodiscard]] Result<UiSlot> rerun(const std::string& workflow, Time time);

  // GET /trigger-status as indented human-readable lines.
  [[nodiscard]] Result<std::string> trigger_status(const std::string& workflow, Time time);

  // GET `target` (e.g. "/api/v1/datasets") from celos-server: the JSON object's text. Errors as
  // for rerun(). Used by the dataset pages (lineage.cc).
  [[nodiscard]] Result<std::string> get_json(const std::string& target);

  // `method` `target` (e.g. "/api/v1/slot-log?…") as it came back, whatever its status; only a
  // transport failure is an error (kFailed). Used by the slot details and range reruns.
  [[nodiscard]] Result<HttpResponse> call(const std::string& method, const std::string& target);

 private:
  std::shared_ptr<HttpClient> client_;
  std::string celos_url_;
  int parallelism_;
  Clock& clock_;
  std::atomic<std::int64_t> batch_retry_after_ms_{0};  // clock_.monotonic(); 0 = try the batch
};

// ---------------------------------------------------------------------------------------------
// The UI server's request handler

struct UiServerOptions {
  std::string celos_url;    // e.g. http://127.0.0.1:8080 (no trailing slash needed)
  std::string hue_url;      // "" = none
  std::string config_path;  // "" = none; re-read whenever its modification time changes
  std::shared_ptr<HttpClient> client;
  std::function<Time()> now;  // default: the system clock
  int parallelism = 8;        // concurrent /workflow-slots requests when there is no batch
};

// GET / -> 302 to /ui; GET /ui?time=T&zoom=MIN[&filter=F][&refresh=S] -> the page (400 for a
// bad time, zoom or refresh, 502 when celos-server is unreachable or answers nonsense);
// POST /rerun?id=W@T -> JSON of the slot's new state; POST /rerun?id=W&start=S&end=E
// [&status=…][&dryRun=true] -> celos-server's range answer (SPEC §13), passed through;
// GET /slot?id=W@T -> an HTML fragment with the slot's details (state, history, trigger tree,
// job output tail, Hue link); GET /trigger-status?id=W@T -> text/plain; GET /lineage?id=W@T -> JSON
// {"upstream": ["w@t"], "downstream": [...]} for highlighting; GET /datasets -> an HTML page of
// the datasets with their producers and consumers. Safe to call concurrently.
HttpHandler make_ui_handler(UiServerOptions options);

}  // namespace celos
