// Times celos-ui's page for 100 and 500 workflows with a week of hourly slots each:
//   render   render_ui_page alone on already-parsed data;
//   batch    the /ui handler reading one /multi-workflow-slots answer (JSON parse + render);
//   single   the /ui handler reading /workflow-list + one /workflow-slots per workflow;
// each against an in-memory celos-server, so no network is involved. With `--celos URL` it also
// times the handler against a real celos-server over HTTP (end to end minus the browser).
// Prints the median and the worst of the runs in milliseconds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/http_client.h"
#include "celos/ui.h"

namespace {

using namespace celos;
using Clock = std::chrono::steady_clock;

const Time kNow = make_time(2015, 9, 15, 11, 30);

SlotStatus status_for(int w, int h) {
  if ((w + h) % 97 == 0) return SlotStatus::kFailure;
  if (h < 3) return (w % 3 == 0) ? SlotStatus::kRunning : SlotStatus::kWaiting;
  return SlotStatus::kSuccess;
}

std::vector<UiWorkflow> generate(int count) {
  std::vector<UiWorkflow> workflows;
  for (int w = 0; w < count; ++w) {
    UiWorkflow wf{fmt::format("workflow-{:04}-some-descriptive-name", w), w % 50 == 0, {}, {}};
    for (int h = 0; h < 7 * 24; ++h) {
      const Time t = std::chrono::floor<std::chrono::hours>(kNow) - std::chrono::hours(h);
      std::optional<std::string> ext;
      if (status_for(w, h) != SlotStatus::kWaiting)
        ext = fmt::format("{:07}-150911-oozie-oozi-W", h);
      wf.slots.push_back(UiSlot{t, status_for(w, h), ext, 0, std::nullopt});
    }
    workflows.push_back(std::move(wf));
  }
  return workflows;
}

boost::json::object workflow_json(const UiWorkflow& wf, Time start, Time end) {
  boost::json::array slots;
  for (const UiSlot& s : wf.slots) {
    if (s.time < start || s.time >= end) continue;
    slots.push_back({{"time", format_time(s.time)},
                     {"status", ui_status_name(s.status)},
                     {"externalID", s.external_id ? boost::json::value(*s.external_id) : nullptr},
                     {"retryCount", s.retry_count}});
  }
  return {{"id", wf.id},
          {"paused", wf.paused},
          {"info", boost::json::object{}},
          {"slots", std::move(slots)}};
}

// An in-memory celos-server: answers are serialized once up front, like a server would per call.
class MemoryCelos : public HttpClient {
 public:
  MemoryCelos(const std::vector<UiWorkflow>& workflows, bool batch, Time start, Time end)
      : batch_(batch) {
    boost::json::array all, ids;
    for (const UiWorkflow& wf : workflows) {
      auto obj = workflow_json(wf, start, end);
      single_[wf.id] = boost::json::serialize(obj);
      all.push_back(std::move(obj));
      ids.push_back(boost::json::value(wf.id));
    }
    all_ = boost::json::serialize(boost::json::object{{"workflows", std::move(all)}});
    list_ = boost::json::serialize(boost::json::object{{"ids", std::move(ids)}});
  }
  Result<HttpResponse> send(const HttpRequest& request) override {
    const std::string& url = request.url;
    if (url.find("/multi-workflow-slots") != std::string::npos) {
      return batch_ ? HttpResponse{200, {}, all_} : HttpResponse{404, {}, R"({"error":"no"})"};
    }
    if (url.find("/workflow-list") != std::string::npos) return HttpResponse{200, {}, list_};
    // /api/v1/maintenance and anything else the page may ask: an older server's 404.
    if (url.find("/workflow-slots") == std::string::npos) return HttpResponse{404, {}, "{}"};
    const auto id_at = url.find("id=") + 3;
    const std::string id = url.substr(id_at, url.find('&', id_at) - id_at);
    return HttpResponse{200, {}, single_.at(id)};
  }

 private:
  bool batch_;
  std::string all_, list_;
  std::map<std::string, std::string> single_;
};

void report(const char* what, int workflows, std::vector<double> ms, std::size_t bytes) {
  std::sort(ms.begin(), ms.end());
  std::printf("%-34s %4d workflows  median %7.1f ms  worst %7.1f ms  page %5zu KiB\n", what,
              workflows, ms[ms.size() / 2], ms.back(), bytes / 1024);
}

template <class F>
std::vector<double> time_runs(int runs, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return ms;
}

HttpServerRequest ui_request(const std::string& zoom) {
  HttpServerRequest r;
  r.method = "GET";
  r.path = "/ui";
  r.query = {{"time", format_time(kNow)}, {"zoom", zoom}};
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string celos_url;
  int runs = 15;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--celos") == 0 && i + 1 < argc) celos_url = argv[++i];
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = std::atoi(argv[++i]);
  }
  for (int count : {100, 500}) {
    const auto workflows = generate(count);
    for (int zoom : {60, 1440}) {
      UiPage page;
      page.time = kNow;
      page.grid = make_tile_grid(kNow, std::chrono::minutes(zoom));
      page.workflows = workflows;
      page.hue_url = "http://hue:8888";
      std::size_t bytes = 0;
      auto ms = time_runs(runs, [&] { bytes = render_ui_page(page).size(); });
      report(fmt::format("render (zoom {})", zoom).c_str(), count, ms, bytes);
    }
    const TileGrid grid = make_tile_grid(kNow, std::chrono::minutes(60));
    for (bool batch : {true, false}) {
      UiServerOptions options;
      options.celos_url = "http://memory";
      options.client = std::make_shared<MemoryCelos>(workflows, batch, grid.begin(), grid.end());
      auto handler = make_ui_handler(options);
      std::size_t bytes = 0;
      auto ms = time_runs(runs, [&] { bytes = handler(ui_request("60")).body.size(); });
      report(batch ? "handler, batch endpoint (zoom 60)" : "handler, per workflow (zoom 60)", count,
             ms, bytes);
    }
  }
  if (!celos_url.empty()) {
    UiServerOptions options;
    options.celos_url = celos_url;
    options.client = make_curl_http_client();
    auto handler = make_ui_handler(options);
    for (const char* zoom : {"60", "1440"}) {
      std::size_t bytes = 0;
      int status = 0;
      HttpServerRequest request = ui_request(zoom);
      request.query = {{"zoom", zoom}};  // now: the server's real slots
      auto ms = time_runs(runs, [&] {
        auto response = handler(request);
        status = response.status;
        bytes = response.body.size();
      });
      report(fmt::format("handler vs {} (zoom {}, HTTP {})", celos_url, zoom, status).c_str(), 0,
             ms, bytes);
    }
  }
  return 0;
}
