#include <thread>

#include <catch2/catch.hpp>

#include "celos/clock.h"
#include "celos/ui.h"
#include "testing/fakes.h"
#include "testing/temp_dir.h"

using namespace celos;
using celos::testing::FakeHttpClient;

namespace {

constexpr const char* kHandlerCelos = "http://celos:1234";

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

FakeHttpClient::Handler handler_answer(std::string method, std::string prefix, int status,
                                       std::string body) {
  return [=](const HttpRequest& r) -> std::optional<Result<HttpResponse>> {
    if (r.method != method || !starts_with(r.url, std::string(kHandlerCelos) + prefix))
      return std::nullopt;
    return HttpResponse{status, {}, body};
  };
}

// An old celos-server: two workflows, no batch endpoint.
void old_server(FakeHttpClient& client) {
  client.on(handler_answer("GET", "/workflow-list", 200, R"({"ids":["alpha","beta"]})"));
  client.on(handler_answer("GET", "/workflow-slots?id=alpha&", 200,
                           R"({"paused":false,"info":{},"slots":[
                      {"time":"2015-09-15T11:00:00.000Z","status":"WAITING","externalID":null,"retryCount":0},
                      {"time":"2015-09-15T10:00:00.000Z","status":"SUCCESS","externalID":"e1","retryCount":0}]})"));
  client.on(handler_answer("GET", "/workflow-slots?id=beta&", 200,
                           R"({"paused":true,"info":{},"slots":[]})"));
}

HttpServerRequest get(std::string path, std::multimap<std::string, std::string> query = {}) {
  HttpServerRequest r;
  r.method = "GET";
  r.path = path;
  r.target = path;
  r.query = std::move(query);
  return r;
}

UiServerOptions options(std::shared_ptr<FakeHttpClient> client) {
  UiServerOptions o;
  o.celos_url = kHandlerCelos;
  o.client = client;
  o.now = [] { return make_time(2015, 9, 15, 11, 30); };
  o.parallelism = 1;  // the fake records requests without a lock
  return o;
}

}  // namespace

TEST_CASE("the root redirects to the grid") {
  auto handler = make_ui_handler(options(std::make_shared<FakeHttpClient>()));
  auto response = handler(get("/"));
  CHECK(response.status == 302);
  CHECK(response.headers["Location"] == "/ui");
}

TEST_CASE("without a batch endpoint the page is read workflow by workflow") {
  auto client = std::make_shared<FakeHttpClient>();
  old_server(*client);
  auto handler = make_ui_handler(options(client));
  auto response = handler(get("/ui"));
  REQUIRE(response.status == 200);
  CHECK(starts_with(response.content_type, "text/html"));
  CHECK(response.body.find("<tr class=\"workflow\" data-wf=\"alpha\">") != std::string::npos);
  CHECK(response.body.find("<tr class=\"workflow paused\" data-wf=\"beta\">") != std::string::npos);
  CHECK(response.body.find(">wait</td>") != std::string::npos);
  // The range asked for ends just after the page's time (slots up to and including it).
  bool ranged = false;
  for (const auto& r : client->requests) {
    if (r.url.find("/workflow-slots?id=alpha&start=2015-09-13T12%3A00%3A00.000Z&end=2015-09-15T11%"
                   "3A30%3A01.000Z") != std::string::npos)
      ranged = true;
  }
  CHECK(ranged);
  // The next page does not ask for the missing batch endpoint again right away.
  client->requests.clear();
  REQUIRE(handler(get("/ui")).status == 200);
  for (const auto& r : client->requests)
    CHECK(r.url.find("multi-workflow-slots") == std::string::npos);
}

TEST_CASE("a missing batch endpoint is asked for again a minute later on the reader's clock") {
  auto client = std::make_shared<FakeHttpClient>();
  old_server(*client);
  ManualClock clock(make_time(2015, 9, 15));
  CelosApiReader reader(client, kHandlerCelos, 1, clock);
  auto batch_requests = [&] {
    int n = 0;
    for (const auto& r : client->requests)
      n += r.url.find("multi-workflow-slots") != std::string::npos;
    return n;
  };
  const Time start = make_time(2015, 9, 15), end = make_time(2015, 9, 15, 12);
  REQUIRE(reader.read(start, end));
  CHECK(batch_requests() == 1);
  clock.advance(std::chrono::seconds(59));
  REQUIRE(reader.read(start, end));
  CHECK(batch_requests() == 1);
  clock.advance(std::chrono::seconds(1));
  REQUIRE(reader.read(start, end));
  CHECK(batch_requests() == 2);
}

TEST_CASE("with the batch endpoint the page costs one read of the slots") {
  auto client = std::make_shared<FakeHttpClient>();
  client->on(handler_answer("GET", "/multi-workflow-slots?", 200, R"({"workflows":[
      {"id":"zeta","paused":false,"slots":[{"time":"2015-09-15T09:00:00.000Z","status":"FAILURE","externalID":"x","retryCount":1}]},
      {"id":"alpha","paused":false,"slots":[]}]})"));
  auto handler = make_ui_handler(options(client));
  auto response = handler(get("/ui", {{"zoom", "30"}}));
  REQUIRE(response.status == 200);
  // The slots in one request, plus the maintenance mode for the banner, the backfill plans
  // for their progress bars and the at-risk and missed deadlines for their list.
  REQUIRE(client->requests.size() == 4);
  CHECK(client->requests[1].url == std::string(kHandlerCelos) + "/api/v1/maintenance");
  int plans = 0, deadlines = 0;
  for (const auto& r : client->requests) {
    plans += r.url == std::string(kHandlerCelos) + "/api/v1/backfills";
    deadlines += r.url.starts_with(std::string(kHandlerCelos) + "/api/v1/deadlines?");
  }
  CHECK(plans == 1);
  CHECK(deadlines == 1);
  CHECK(response.body.find("class=\"backfill\"") == std::string::npos);  // 404 here: no bars
  CHECK(response.body.find("id=\"maintenance\"") == std::string::npos);  // 404 here: no banner
  CHECK(response.body.find(">fail</td>") != std::string::npos);
  CHECK(response.body.find("data-wf=\"alpha\"") < response.body.find("data-wf=\"zeta\""));
}

TEST_CASE("bad time or zoom parameters are a 400 page") {
  auto handler = make_ui_handler(options(std::make_shared<FakeHttpClient>()));
  CHECK(handler(get("/ui", {{"zoom", "abc"}})).status == 400);
  CHECK(handler(get("/ui", {{"time", "2015-09-15T11:00"}})).status == 400);
  CHECK(handler(get("/ui", {{"time", "2015-09-15T11:00+02:00"}})).status == 400);
  const auto bad_zone = handler(get("/ui", {{"tz", "Europe/Pariss"}}));
  CHECK(bad_zone.status == 400);
  CHECK(bad_zone.body.find("unknown time zone") != std::string::npos);
}

TEST_CASE("a celos-server that is down gives a readable 502 and the UI recovers by itself") {
  auto client = std::make_shared<FakeHttpClient>();
  bool down = true;
  client->on([&](const HttpRequest& r) -> std::optional<Result<HttpResponse>> {
    if (down) return Result<HttpResponse>(fail("GET " + r.url + ": connection refused"));
    return std::nullopt;
  });
  old_server(*client);
  auto handler = make_ui_handler(options(client));
  auto response = handler(get("/ui"));
  CHECK(response.status == 502);
  CHECK(starts_with(response.content_type, "text/html"));
  CHECK(response.body.find("celos-server is unavailable") != std::string::npos);
  CHECK(response.body.find("connection refused") != std::string::npos);
  down = false;
  CHECK(handler(get("/ui")).status == 200);
}

TEST_CASE("rerun through the UI calls celos-server's rerun and answers the new state") {
  auto client = std::make_shared<FakeHttpClient>();
  client->on(
      handler_answer("POST", "/rerun?id=my%40wf&time=2015-09-15T10%3A00%3A00.000Z", 200, "{}"));
  client->on(handler_answer(
      "GET", "/slot-state?id=my%40wf&time=2015-09-15T10%3A00%3A00.000Z", 200,
      R"({"time":"2015-09-15T10:00:00.000Z","status":"WAITING","externalID":null,"retryCount":0})"));
  auto handler = make_ui_handler(options(client));
  auto request = get("/rerun", {{"id", "my@wf@2015-09-15T10:00:00.000Z"}});
  request.method = "POST";
  auto response = handler(request);
  CHECK(response.status == 200);
  CHECK(response.body.find(R"("status":"WAITING")") != std::string::npos);
  CHECK(response.body.find(R"("class":"waiting")") != std::string::npos);
  CHECK(client->requests.at(0).method == "POST");

  request.method = "GET";
  CHECK(handler(request).status == 405);
  request.method = "POST";
  request.query = {{"id", "no-time"}};
  CHECK(handler(request).status == 400);
}

TEST_CASE("an illegal rerun keeps celos-server's status and message") {
  auto client = std::make_shared<FakeHttpClient>();
  client->on(handler_answer("POST", "/rerun?", 400, R"({"error":"cannot rerun a RUNNING slot"})"));
  auto handler = make_ui_handler(options(client));
  auto request = get("/rerun", {{"id", "wf@2015-09-15T10:00Z"}});
  request.method = "POST";
  auto response = handler(request);
  CHECK(response.status == 400);
  CHECK(response.body.find("cannot rerun a RUNNING slot") != std::string::npos);
}

TEST_CASE("the trigger status of a waiting slot reads as indented lines") {
  auto client = std::make_shared<FakeHttpClient>();
  client->on(handler_answer("GET", "/trigger-status?id=wf&time=", 200,
                            R"({"type":"AndTrigger","ready":false,
      "description":"Not all nested triggers are ready","subStatuses":[
      {"type":"DelayTrigger","ready":false,"description":"Delayed until 2015-09-14T16:00:00.000Z","subStatuses":[]}]})"));
  auto handler = make_ui_handler(options(client));
  auto response = handler(get("/trigger-status", {{"id", "wf@2015-09-14T15:00Z"}}));
  CHECK(response.status == 200);
  CHECK(response.body ==
        "[not ready] Not all nested triggers are ready\n  [not ready] Delayed until "
        "2015-09-14T16:00:00.000Z");
}

TEST_CASE("the config file is re-read when it changes and a broken one keeps the last good one") {
  celos::testing::TempDir dir;
  const std::string path = dir / "ui.json";
  celos::testing::write_text_file(path,
                                  R"({"groups":[{"name":"First group","workflows":["alpha"]}]})");
  auto client = std::make_shared<FakeHttpClient>();
  old_server(*client);
  auto o = options(client);
  o.config_path = path;
  auto handler = make_ui_handler(o);
  CHECK(handler(get("/ui")).body.find(">First group</th>") != std::string::npos);

  celos::testing::write_text_file(
      path, R"({"groups":[{"name":"Second group, longer","workflows":["beta"]}]})");
  auto body = handler(get("/ui")).body;
  CHECK(body.find(">Second group, longer</th>") != std::string::npos);
  CHECK(body.find(">First group</th>") == std::string::npos);

  celos::testing::write_text_file(path, "{ broken");
  body = handler(get("/ui")).body;
  CHECK(body.find(">Second group, longer</th>") != std::string::npos);
  CHECK(body.find("id=\"notice\"") != std::string::npos);
}

TEST_CASE("lineage lists a slot's upstream and downstream slots, datasets are a page") {
  auto client = std::make_shared<FakeHttpClient>();
  client->on(handler_answer("GET", "/api/v1/lineage?id=clean&time=2015-09-15T10%3A00%3A00.000Z",
                            200,
                            R"({"inputs":[{"dataset":"raw","time":"t","path":"/r","present":true,
                         "producer":{"workflow":"import","time":"2015-09-15T10:00:00.000Z","status":"SUCCESS"}}],
                        "outputs":[{"dataset":"clean","time":"t","path":"/c","exists":true,
                         "complete":true,"wouldRemove":false,
                         "consumers":[{"workflow":"report","time":"2015-09-15T11:00:00.000Z","status":"WAITING"}]}]})"));
  client->on(
      handler_answer("GET", "/api/v1/datasets", 200,
                     R"({"datasets":[{"id":"raw","path":"/r/${hour}","fs":"","doneFlag":"_SUCCESS",
                        "producers":["import"],"consumers":["clean","<x>"]}]})"));
  auto handler = make_ui_handler(options(client));
  auto response = handler(get("/lineage", {{"id", "clean@2015-09-15T10:00:00.000Z"}}));
  REQUIRE(response.status == 200);
  CHECK(response.body.find(R"("upstream":["import@2015-09-15T10:00:00.000Z"])") !=
        std::string::npos);
  CHECK(response.body.find(R"("downstream":["report@2015-09-15T11:00:00.000Z"])") !=
        std::string::npos);
  CHECK(handler(get("/lineage", {{"id", "nope"}})).status == 400);
  CHECK(handler(get("/lineage", {{"id", "other@2015-09-15T10:00:00.000Z"}})).status == 404);

  auto page = handler(get("/datasets"));
  CHECK(page.status == 200);
  CHECK(page.body.find("<td>import</td><td>clean, &lt;x&gt;</td>") != std::string::npos);
}

TEST_CASE("a drain or pause of celos-server shows as a banner above the grid") {
  auto client = std::make_shared<FakeHttpClient>();
  client->on(handler_answer("GET", "/multi-workflow-slots?", 200, R"({"workflows":[]})"));
  client->on(handler_answer(
      "GET", "/api/v1/maintenance", 200,
      R"({"mode":"drain","reason":"OS <patching>","since":"2015-09-15T11:00:00.000Z","running":3})"));
  auto handler = make_ui_handler(options(client));
  auto response = handler(get("/ui"));
  REQUIRE(response.status == 200);
  CHECK(response.body.find("<div id=\"maintenance\">Maintenance mode drain: OS &lt;patching&gt; "
                           "(since 2015-09-15T11:00:00.000Z)</div>") != std::string::npos);
}
