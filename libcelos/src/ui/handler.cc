// The UI server's request handler: parses parameters, reads celos-server through
// CelosApiReader and renders. celos-server being down is an ordinary answer (502 with a
// readable page); the next request simply tries again.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/clock.h"
#include "celos/mutex.h"
#include "celos/ui.h"
#include "ui/deadlines.h"
#include "ui/details.h"
#include "ui/html.h"
#include "ui/lineage.h"

namespace celos {

namespace {

namespace fs = std::filesystem;

const std::string* param(const HttpServerRequest& request, const std::string& name) {
  const auto it = request.query.find(name);
  return it == request.query.end() ? nullptr : &it->second;
}

// SPEC §2 times; a '+' that a form decoder turned into a space (`+00:00`) is put back.
Result<Time> parse_query_time(std::string text) {
  auto t = parse_time(text);
  if (t || text.find(' ') == std::string::npos) return t;
  std::replace(text.begin(), text.end(), ' ', '+');
  return parse_time(text);
}

HttpServerResponse error_html(int status, std::string_view title, std::string_view message) {
  return html_response(status, render_error_page(status, title, message));
}

HttpServerResponse json_answer(int status, const boost::json::object& body) {
  HttpServerResponse response;
  response.status = status;
  response.body = boost::json::serialize(body);
  response.headers["Cache-Control"] = "no-store";
  return response;
}

HttpServerResponse ui_json_error(int status, std::string_view message) {
  return json_answer(status, {{"error", message}});
}

int status_of(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalid:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    default:
      return 502;
  }
}

// The config file, re-read when its modification time or size changes. A broken or vanished
// file keeps the last good config and says so above the grid.
class ConfigFile {
 public:
  explicit ConfigFile(std::string path) : path_(std::move(path)) {}

  std::pair<UiConfig, std::string> get() {
    if (path_.empty()) return {};
    MutexLock lock(mutex_);
    std::error_code ec;
    const auto mtime = fs::last_write_time(path_, ec);
    const auto size = ec ? 0 : fs::file_size(path_, ec);
    if (ec) {
      return {config_, fmt::format("Cannot read the UI config {}: {}", path_, ec.message())};
    }
    if (!loaded_ || mtime != mtime_ || size != size_) {
      loaded_ = true;
      mtime_ = mtime;
      size_ = size;
      std::ifstream in(path_, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      auto parsed = parse_ui_config(text.str());
      if (parsed) {
        config_ = std::move(*parsed);
        notice_.clear();
      } else {
        notice_ = fmt::format("{} (file {}; showing the last good config)", parsed.error().message,
                              path_);
      }
    }
    return {config_, notice_};
  }

 private:
  const std::string path_;
  Mutex mutex_;
  bool loaded_ GUARDED_BY(mutex_) = false;
  fs::file_time_type mtime_ GUARDED_BY(mutex_);
  std::uintmax_t size_ GUARDED_BY(mutex_) = 0;
  UiConfig config_ GUARDED_BY(mutex_);
  std::string notice_ GUARDED_BY(mutex_);
};

// `wordcount@2015-09-13T13:00:00.000Z`: the workflow id may itself contain '@', the time not.
Result<SlotId> parse_slot_param(const std::string* text) {
  if (text == nullptr) return fail("missing parameter id=<workflow>@<time>", ErrorCode::kInvalid);
  const auto at = text->rfind('@');
  if (at == std::string::npos || at == 0) {
    return fail(fmt::format("id '{}' is not <workflow>@<time>", *text), ErrorCode::kInvalid);
  }
  auto time = parse_query_time(text->substr(at + 1));
  if (!time) return fail(time.error().message, ErrorCode::kInvalid);
  return SlotId{text->substr(0, at), *time};
}

class UiHandler {
 public:
  explicit UiHandler(UiServerOptions options)
      : options_(std::move(options)),
        reader_(options_.client, options_.celos_url, options_.parallelism),
        config_(options_.config_path) {
    if (!options_.now) {
      options_.now = [] { return system_clock().now(); };
    }
    while (!options_.hue_url.empty() && options_.hue_url.back() == '/') options_.hue_url.pop_back();
  }

  HttpServerResponse operator()(const HttpServerRequest& request) {
    if (request.path == "/" || request.path.empty()) {
      HttpServerResponse response = html_response(302, "<a href=\"/ui\">/ui</a>\n");
      response.headers["Location"] = "/ui";
      return response;
    }
    if (request.path == "/ui") {
      if (request.method != "GET" && request.method != "HEAD") return not_allowed("GET");
      return page(request);
    }
    if (request.path == "/rerun") {
      if (request.method != "POST") return not_allowed("POST");
      return rerun(request);
    }
    if (request.path == "/slot") {
      if (request.method != "GET") return not_allowed("GET");
      auto slot = parse_slot_param(param(request, "id"));
      if (!slot) return error_html(400, "Bad slot", slot.error().message);
      return ui_slot_details(reader_, *slot, options_.hue_url);
    }
    if (request.path == "/trigger-status") {
      if (request.method != "GET") return not_allowed("GET");
      return trigger_status(request);
    }
    if (request.path == "/lineage" || request.path == "/datasets") {  // datasets (lineage.cc)
      if (request.method != "GET") return not_allowed("GET");
      if (request.path == "/datasets") return ui_datasets(reader_);
      auto slot = parse_slot_param(param(request, "id"));
      if (!slot) return ui_json_error(400, slot.error().message);
      return ui_lineage(reader_, *slot);
    }
    return error_html(404, "Not found",
                      fmt::format("There is no page {} here; the grid is at /ui.", request.path));
  }

 private:
  static HttpServerResponse not_allowed(const char* allow) {
    HttpServerResponse response = ui_json_error(405, fmt::format("use {}", allow));
    response.headers["Allow"] = allow;
    return response;
  }

  HttpServerResponse page(const HttpServerRequest& request) {
    Time time = options_.now();
    if (const std::string* t = param(request, "time")) {
      auto parsed = parse_query_time(*t);
      if (!parsed) return error_html(400, "Bad time", parsed.error().message);
      time = *parsed;
    }
    auto zoom = parse_zoom(param(request, "zoom"));
    if (!zoom) return error_html(400, "Bad zoom", zoom.error().message);
    auto refresh = parse_refresh(param(request, "refresh"));
    if (!refresh) return error_html(400, "Bad refresh", refresh.error().message);

    UiPage page;
    page.time = time;
    page.fixed_time = param(request, "time") != nullptr;
    page.refresh_seconds = *refresh;
    if (const std::string* filter = param(request, "filter")) page.filter = *filter;
    if (const std::string* tz = param(request, "tz"); tz != nullptr && !tz->empty()) {
      auto zone = TimeZone::load(*tz);
      if (!zone) return error_html(400, "Bad tz", zone.error().message);
      page.zone = *zone;
      page.zone_given = true;
    }
    page.grid = make_tile_grid(time, *zoom);
    page.hue_url = options_.hue_url;
    std::tie(page.config, page.notice) = config_.get();
    // Slots up to and including `time`: the page shows what had happened by then.
    const Time end = std::min(page.grid.end(), floor_seconds(time) + std::chrono::seconds(1));
    auto workflows = reader_.read(page.grid.begin(), end);
    if (!workflows) {
      return error_html(502, "celos-server is unavailable",
                        fmt::format("celos-server at {} could not be read: {}", options_.celos_url,
                                    workflows.error().message));
    }
    page.workflows = std::move(*workflows);
    apply_filter(page);
    page.maintenance = maintenance_banner();
    if (auto plans = reader_.get_json("/api/v1/backfills"))
      page.backfills = parse_ui_backfills(*plans);
    page.deadlines = at_risk_and_missed(page.grid.begin(), end, page.filter);
    return html_response(200, render_ui_page(page));
  }

  // "drain: reason (since T)" while celos-server is in maintenance; "" when off, or when the
  // server cannot say (an older celos-server: the page works without the banner).
  std::string maintenance_banner() {
    auto text = reader_.get_json("/api/v1/maintenance");
    if (!text) return "";
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(*text, ec);
    const boost::json::object* o = ec ? nullptr : v.if_object();
    const boost::json::value* mode = o ? o->if_contains("mode") : nullptr;
    if (!mode || !mode->is_string() || mode->get_string() == "off") return "";
    std::string banner(mode->get_string());
    if (const auto* reason = o->if_contains("reason"); reason && reason->is_string()) {
      banner += ": " + std::string(reason->get_string());
    }
    if (const auto* since = o->if_contains("since"); since && since->is_string()) {
      banner += " (since " + std::string(since->get_string()) + ")";
    }
    return banner;
  }

  // The slots whose deadline in [start, end + 1 day) is at risk or missed (at most 7 days);
  // none when the server cannot say (an older celos-server: the page works without the list).
  std::vector<UiDeadline> at_risk_and_missed(Time start, Time end, const std::string& filter) {
    end = std::min(end + std::chrono::hours(24), start + std::chrono::hours(24 * 7));
    auto text =
        reader_.get_json(fmt::format("/api/v1/deadlines?start={}&end={}&state=AT_RISK,MISSED",
                                     format_time(start), format_time(end)));
    if (!text) return {};
    auto list = parse_ui_deadlines(*text);
    if (!list) return {};
    std::vector<UiDeadline> shown;
    for (UiDeadline& d : *list) {
      if (workflow_matches_filter(d.workflow, filter)) shown.push_back(std::move(d));
    }
    return shown;
  }

  // POST /rerun?id=W&start=S&end=E[&status=…][&dryRun=true]: a range (SPEC §16).
  HttpServerResponse range_rerun(const HttpServerRequest& request) {
    const std::string* id = param(request, "id");
    const std::string* start = param(request, "start");
    const std::string* end = param(request, "end");
    if (id == nullptr || id->empty()) return ui_json_error(400, "missing parameter id=<workflow>");
    if (start == nullptr || end == nullptr) {
      return ui_json_error(400, "a range rerun needs both start and end");
    }
    auto from = parse_query_time(*start);
    if (!from) return ui_json_error(400, "parameter start: " + from.error().message);
    auto to = parse_query_time(*end);
    if (!to) return ui_json_error(400, "parameter end: " + to.error().message);
    const std::string* dry = param(request, "dryRun");
    if (dry != nullptr && *dry != "true" && *dry != "false") {
      return ui_json_error(400, "parameter dryRun: must be true or false, not \"" + *dry + "\"");
    }
    return ui_range_rerun(reader_, *id, *from, *to, param(request, "status"),
                          dry != nullptr && *dry == "true");
  }

  HttpServerResponse rerun(const HttpServerRequest& request) {
    if (param(request, "start") != nullptr || param(request, "end") != nullptr) {
      return range_rerun(request);
    }
    auto slot = parse_slot_param(param(request, "id"));
    if (!slot) return ui_json_error(400, slot.error().message);
    auto state = reader_.rerun(slot->workflow, slot->time);
    if (!state) return ui_json_error(status_of(state.error()), state.error().message);
    return json_answer(200, {{"id", slot->workflow},
                             {"time", format_time(state->time)},
                             {"status", ui_status_name(state->status)},
                             {"word", state_word(state->status)},
                             {"class", state_class(state->status)}});
  }

  HttpServerResponse trigger_status(const HttpServerRequest& request) {
    auto slot = parse_slot_param(param(request, "id"));
    HttpServerResponse response;
    response.content_type = "text/plain; charset=utf-8";
    if (!slot) {
      response.status = 400;
      response.body = slot.error().message;
      return response;
    }
    auto text = reader_.trigger_status(slot->workflow, slot->time);
    if (!text) {
      response.status = status_of(text.error());
      response.body = text.error().message;
      return response;
    }
    response.body = std::move(*text);
    return response;
  }

  UiServerOptions options_;
  CelosApiReader reader_;
  ConfigFile config_;
};

}  // namespace

HttpHandler make_ui_handler(UiServerOptions options) {
  auto handler = std::make_shared<UiHandler>(std::move(options));
  return [handler](const HttpServerRequest& request) { return (*handler)(request); };
}

}  // namespace celos
