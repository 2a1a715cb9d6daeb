// celos-ui's operator features against a fake celos-server: slot details on click, range reruns
// with a dry run, the workflow filter and the auto-refresh parameter.
#include <catch2/catch.hpp>

#include "celos/ui.h"
#include "testing/fakes.h"

using namespace celos;
using celos::testing::FakeHttpClient;

namespace {

constexpr const char* kCelos = "http://celos:1234";
constexpr const char* kSlotQuery = "id=wf&time=2015-09-15T10%3A00%3A00.000Z";

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

FakeHttpClient::Handler answer(std::string method, std::string prefix, int status,
                               std::string body) {
  return [=](const HttpRequest& r) -> std::optional<Result<HttpResponse>> {
    if (r.method != method || r.url.rfind(std::string(kCelos) + prefix, 0) != 0)
      return std::nullopt;
    return HttpResponse{status, {}, body};
  };
}

HttpServerRequest request(std::string method, std::string path,
                          std::multimap<std::string, std::string> query) {
  HttpServerRequest r;
  r.method = std::move(method);
  r.path = path;
  r.target = path;
  r.query = std::move(query);
  return r;
}

HttpHandler handler_for(std::shared_ptr<FakeHttpClient> client, std::string hue = "") {
  UiServerOptions o;
  o.celos_url = kCelos;
  o.client = std::move(client);
  o.hue_url = std::move(hue);
  o.now = [] { return make_time(2015, 9, 15, 11, 30); };
  o.parallelism = 1;
  return make_ui_handler(o);
}

void failed_slot(FakeHttpClient& client) {
  const std::string q = kSlotQuery;
  client.on(answer(
      "GET", "/api/v1/slot-history?" + q, 200,
      R"([{"at":"2015-09-15T10:05:00.000Z","from":null,"to":"READY","externalID":null,"retryCount":0,"by":"step"},
                       {"at":"2015-09-15T10:06:00.000Z","from":"RUNNING","to":"FAILURE","externalID":"job-<1>","retryCount":1,"by":"api:ops@127.0.0.1","message":"exit 1"}])"));
  client.on(answer(
      "GET", "/slot-state?" + q, 200,
      R"({"time":"2015-09-15T10:00:00.000Z","status":"WAITING","externalID":"job-<1>","retryCount":1,"message":"sbatch: <refused>","retryAt":"2015-09-15T10:16:00.000Z"})"));
  client.on(answer(
      "GET", "/trigger-status?" + q, 200,
      R"({"type":"RetryBackoff","ready":false,"description":"Retry 1 not before 2015-09-15T10:16:00.000Z","subStatuses":[
                       {"type":"AlwaysTrigger","ready":true,"description":"Always ready","subStatuses":[]}]})"));
  client.on(answer("GET", "/api/v1/slot-log?" + q + "&stream=stdout&tail=8192", 200,
                   std::string("line 1\n<script>alert(1)</script>\n\x01\x02 binary\n")));
  client.on(answer("GET", "/api/v1/slot-log?" + q + "&stream=stderr", 404,
                   R"({"error":"slot wf@2015-09-15T10:00:00.000Z has no stderr"})"));
}

}  // namespace

TEST_CASE(
    "a slot's details show its state, back-off, history, trigger tree, escaped output and Hue "
    "link") {
  auto client = std::make_shared<FakeHttpClient>();
  failed_slot(*client);
  auto handler = handler_for(client, "http://hue:8888");
  auto response = handler(request("GET", "/slot", {{"id", "wf@2015-09-15T10:00:00.000Z"}}));
  REQUIRE(response.status == 200);
  CHECK(response.content_type.rfind("text/html", 0) == 0);
  const std::string& body = response.body;
  CHECK(has(body, "data-id=\"wf@2015-09-15T10:00:00.000Z\""));
  CHECK(has(body, "<td class=\"state WAITING\">WAITING</td>"));
  CHECK(has(body, "<td class=\"message\">sbatch: &lt;refused&gt;</td>"));
  CHECK(has(body, "<td class=\"retry-at\">2015-09-15T10:16:00.000Z (back-off)</td>"));
  CHECK(has(body, "<td>api:ops@127.0.0.1</td><td>job-&lt;1&gt;</td><td>1</td><td>exit 1</td>"));
  CHECK(
      has(body, "[not ready] Retry 1 not before 2015-09-15T10:16:00.000Z\n  [ready] Always ready"));
  CHECK(has(body, "line 1\n&lt;script&gt;alert(1)&lt;/script&gt;\n.. binary"));
  CHECK_FALSE(has(body, "<script>"));
  CHECK(has(body, "has no stderr"));
  CHECK(has(body, "href=\"http://hue:8888/list_oozie_workflow/job-%3C1%3E\""));
}

TEST_CASE("details of an unknown slot are a 404 and a bad id a 400, asking nothing more") {
  auto client = std::make_shared<FakeHttpClient>();
  client->on(answer("GET", "/api/v1/slot-history?", 404, R"({"error":"unknown workflow: nope"})"));
  auto handler = handler_for(client);
  auto response = handler(request("GET", "/slot", {{"id", "nope@2015-09-15T10:00:00.000Z"}}));
  CHECK(response.status == 404);
  CHECK(has(response.body, "unknown workflow: nope"));
  CHECK(client->requests.size() == 1);
  CHECK(handler(request("GET", "/slot", {{"id", "no-time"}})).status == 400);
  CHECK(handler(request("POST", "/slot", {{"id", "wf@2015-09-15T10:00:00.000Z"}})).status == 405);
  CHECK(client->requests.size() == 1);
}

TEST_CASE("a slot with nothing stored reads as WAITING with an empty history") {
  auto client = std::make_shared<FakeHttpClient>();
  client->on(answer("GET", "/api/v1/slot-history?", 200, "[]"));
  client->on(answer("GET", "/slot-state?", 404, R"({"error":"no state stored for slot"})"));
  auto response = handler_for(client)(request("GET", "/slot", {{"id", "wf@2015-09-15T10:00Z"}}));
  REQUIRE(response.status == 200);
  CHECK(has(response.body, ">WAITING</td>"));
  CHECK(has(response.body, "nothing stored yet"));
  CHECK(has(response.body, "No changes recorded."));
}

TEST_CASE("a range rerun is forwarded to celos-server's range API, dry run and status included") {
  auto client = std::make_shared<FakeHttpClient>();
  client->on(answer(
      "POST",
      "/api/v1/"
      "rerun?id=my%20wf&start=2015-09-15T08%3A00%3A00.000Z&end=2015-09-15T11%3A00%3A00.000Z&status="
      "FAILURE%2CKILLED&dryRun=true",
      200,
      R"({"dryRun":true,"slots":[{"time":"2015-09-15T10:00:00.000Z","from":"FAILURE","to":"WAITING"}],"skipped":[]})"));
  auto handler = handler_for(client);
  auto r = request("POST", "/rerun",
                   {{"id", "my wf"},
                    {"start", "2015-09-15T08:00Z"},
                    {"end", "2015-09-15T11:00Z"},
                    {"status", "FAILURE,KILLED"},
                    {"dryRun", "true"}});
  auto response = handler(r);
  REQUIRE(response.status == 200);
  CHECK(has(response.body, R"("dryRun":true)"));
  REQUIRE(client->requests.size() == 1);
  CHECK(client->requests[0].method == "POST");

  r.query = {{"id", "my wf"}, {"start", "2015-09-15T08:00Z"}, {"end", "2015-09-15T11:00Z"}};
  client->requests.clear();
  handler(r);
  REQUIRE(client->requests.size() == 1);
  CHECK_FALSE(has(client->requests[0].url, "dryRun"));
  CHECK_FALSE(has(client->requests[0].url, "status"));
}

TEST_CASE("a refused range keeps celos-server's 400, bad range parameters never reach it") {
  auto client = std::make_shared<FakeHttpClient>();
  client->on(answer("POST", "/api/v1/rerun?", 400, R"({"error":"start is after end"})"));
  auto handler = handler_for(client);
  auto r = request("POST", "/rerun",
                   {{"id", "wf"}, {"start", "2015-09-15T11:00Z"}, {"end", "2015-09-15T08:00Z"}});
  auto response = handler(r);
  CHECK(response.status == 400);
  CHECK(has(response.body, "start is after end"));
  client->requests.clear();
  r.query = {{"id", "wf"}, {"start", "yesterday"}, {"end", "2015-09-15T08:00Z"}};
  CHECK(handler(r).status == 400);
  r.query = {{"id", "wf"}, {"start", "2015-09-15T08:00Z"}};
  CHECK(handler(r).status == 400);
  r.query = {{"id", "wf"},
             {"start", "2015-09-15T08:00Z"},
             {"end", "2015-09-15T09:00Z"},
             {"dryRun", "yes"}};
  CHECK(handler(r).status == 400);
  CHECK(client->requests.empty());
}

TEST_CASE("the filter keeps matching workflows, case-insensitively, and the links keep it") {
  auto client = std::make_shared<FakeHttpClient>();
  client->on(answer("GET", "/multi-workflow-slots?", 200, R"({"workflows":[
      {"id":"Alpha-daily","paused":false,"slots":[]},{"id":"beta","paused":false,"slots":[]}]})"));
  auto handler = handler_for(client);
  auto response = handler(request("GET", "/ui", {{"filter", "ALPHA"}, {"refresh", "30"}}));
  REQUIRE(response.status == 200);
  CHECK(has(response.body, "data-wf=\"Alpha-daily\""));
  CHECK_FALSE(has(response.body, "data-wf=\"beta\""));
  CHECK(has(response.body, "name=\"filter\" value=\"ALPHA\""));
  CHECK(has(response.body, "&amp;zoom=60&amp;filter=ALPHA&amp;refresh=30\">&laquo; earlier"));
  CHECK(has(response.body, "data-refresh=\"30\""));
  // The page never asks for any slot's details: they load on click.
  for (const auto& r : client->requests) CHECK_FALSE(has(r.url, "slot-history"));
}

TEST_CASE("a bad refresh is a 400 that says what is allowed") {
  auto handler = handler_for(std::make_shared<FakeHttpClient>());
  for (const char* bad : {"1", "abc", "-5", "3601", "10s"}) {
    auto response = handler(request("GET", "/ui", {{"refresh", bad}}));
    CHECK(response.status == 400);
    CHECK(has(response.body, "from 5 to 3600"));
  }
  std::string zero = "0", five = "5";
  CHECK(parse_refresh(&zero) == 0);
  CHECK(parse_refresh(&five) == 5);
  CHECK(parse_refresh(nullptr) == 0);
}

TEST_CASE("a filter drops unmatched listed workflows and groups left empty") {
  UiPage page;
  page.filter = "Sales";
  page.config.groups = {UiGroup{"Finance", {"sales-eu", "ledger"}}, UiGroup{"Ops", {"backup"}}};
  page.workflows = {UiWorkflow{"ledger", false, {}, {}}, UiWorkflow{"sales-eu", false, {}, {}}};
  apply_filter(page);
  REQUIRE(page.config.groups.size() == 1);
  CHECK(page.config.groups[0].workflows == std::vector<std::string>{"sales-eu"});
  REQUIRE(page.workflows.size() == 1);
  CHECK(page.workflows[0].id == "sales-eu");
  CHECK(workflow_matches_filter("anything", ""));
  CHECK_FALSE(workflow_matches_filter("abc", "abcd"));
}
