#include "celos/api.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "celos/api_serving.h"
#include "celos/state_db.h"
#include "testing/api_world.h"

namespace {

namespace json = boost::json;
using namespace celos;
using celos::testing::FakeExternalService;
using celos::testing::WorldOptions;

const Time kApiTestNow = make_time(2015, 9, 13, 13, 30);

// A scheduler over two hourly workflows ("wordcount" with the fake service, "beta" starting
// later), the real file state database in a temp dir, and a fixed clock.
struct ApiTestWorld : celos::testing::ApiWorld {
  explicit ApiTestWorld(std::unique_ptr<WorkflowSource> other_source = nullptr)
      : ApiWorld({.db = WorldOptions::Db::kLocalDisk,
                  .source = std::move(other_source),
                  .now = kApiTestNow}) {
    add(workflow("wordcount", Time{}));
    auto beta = workflow("beta", make_time(2015, 9, 13, 10));
    beta.url = "http://example.com/beta";
    beta.contacts = {Contact{"Ann", "ann@example.com"}};
    add(beta);
    serve({.clock = clock_function(), .version = "9.9.9"});
  }

  Workflow workflow(const std::string& id, Time start) {
    Workflow w = ApiWorld::workflow(id);
    w.start_time = start;
    return w;
  }

  std::string status_of(const std::string& id, const std::string& time) {
    auto state = db->get_slot(SlotId{id, *parse_time(time)});
    REQUIRE(state);
    return state->has_value() ? std::string(to_string((*state)->status)) : "none";
  }
};

std::string error_of(const HttpServerResponse& response) {
  return std::string(json::parse(response.body).at("error").as_string());
}

}  // namespace

TEST_CASE("workflow-list answers the sorted workflow ids") {
  ApiTestWorld w;
  const auto body = w.call_json("GET", "/workflow-list");
  CHECK(json::serialize(body) == R"({"ids":["beta","wordcount"]})");
}

TEST_CASE(
    "workflow-slots lists a week of hourly slots newest first, WAITING when nothing is stored") {
  ApiTestWorld w;
  const auto body = w.call_json("GET", "/workflow-slots?id=wordcount");
  const auto& slots = body.at("slots").as_array();
  REQUIRE(slots.size() == 168);
  CHECK(slots.front().at("time").as_string() == "2015-09-13T13:00:00.000Z");
  CHECK(slots.back().at("time").as_string() == "2015-09-06T14:00:00.000Z");
  CHECK(slots.front().at("status").as_string() == "WAITING");
  CHECK(slots.front().at("externalID").is_null());
  CHECK(slots.front().at("retryCount").as_int64() == 0);
  CHECK(body.at("paused").as_bool() == false);
  CHECK(body.at("info").at("url").is_null());
}

TEST_CASE("workflow-slots shows the workflow's info and no slot before its startTime") {
  ApiTestWorld w;
  const auto body =
      w.call_json("GET", "/workflow-slots?id=beta&start=2015-09-13T00:00Z&end=2015-09-13T12:30Z");
  const auto& slots = body.at("slots").as_array();
  REQUIRE(slots.size() == 3);  // 10:00, 11:00, 12:00
  CHECK(slots.back().at("time").as_string() == "2015-09-13T10:00:00.000Z");
  CHECK(body.at("info").at("url").as_string() == "http://example.com/beta");
  CHECK(body.at("info").at("contacts").at(0).at("email").as_string() == "ann@example.com");
}

TEST_CASE("multi-workflow-slots answers every workflow in one response sorted by id") {
  ApiTestWorld w;
  const auto body =
      w.call_json("GET", "/multi-workflow-slots?start=2015-09-13T00:00Z&end=2015-09-13T12:30Z");
  const auto& workflows = body.at("workflows").as_array();
  REQUIRE(workflows.size() == 2);
  CHECK(workflows[0].at("id").as_string() == "beta");
  CHECK(workflows[0].at("slots").as_array().size() == 3);  // startTime 10:00
  CHECK(workflows[0].at("info").at("url").as_string() == "http://example.com/beta");
  CHECK(workflows[1].at("id").as_string() == "wordcount");
  CHECK(workflows[1].at("slots").as_array().size() == 13);
  CHECK(workflows[1].at("slots").at(0).at("time").as_string() == "2015-09-13T12:00:00.000Z");
  CHECK(workflows[1].at("paused").as_bool() == false);
}

TEST_CASE("multi-workflow-slots takes a list of ids and refuses an unknown one") {
  ApiTestWorld w;
  const auto body = w.call_json("GET", "/multi-workflow-slots?ids=wordcount");
  REQUIRE(body.at("workflows").as_array().size() == 1);
  CHECK(body.at("workflows").at(0).at("slots").as_array().size() == 168);
  CHECK(w.call("GET", "/multi-workflow-slots?ids=wordcount,nope").status == 404);
  CHECK(w.call("GET", "/multi-workflow-slots?start=2015-09-01T00:00Z").status == 400);
}

TEST_CASE("multi-workflow-slots reports an unreadable workflow in its own entry") {
  ApiTestWorld w;
  celos::testing::write_text_file(*w.dir / "db/state/beta/2015-09-13/11:00:00.000Z", "{broken");
  const auto body = w.call_json("GET", "/multi-workflow-slots");
  const auto& beta = body.at("workflows").at(0);
  CHECK(beta.at("id").as_string() == "beta");
  CHECK(std::string(beta.at("error").as_string()).find("11:00:00.000Z") != std::string::npos);
  CHECK(body.at("workflows").at(1).at("slots").as_array().size() == 168);
}

TEST_CASE("workflow-slots refuses a range longer than 7 days or an end before the start") {
  ApiTestWorld w;
  auto too_long = w.call("GET", "/workflow-slots?id=wordcount&start=2015-09-01T00:00Z");
  CHECK(too_long.status == 400);
  CHECK(error_of(too_long).find("7 days") != std::string::npos);
  auto reversed =
      w.call("GET", "/workflow-slots?id=wordcount&start=2015-09-13T00:00Z&end=2015-09-12T00:00Z");
  CHECK(reversed.status == 400);
  CHECK(error_of(reversed).find("start") != std::string::npos);
}

TEST_CASE("A missing id is a 400 whose message names the parameter") {
  ApiTestWorld w;
  for (const char* target : {"/workflow-slots", "/slot-state?time=2015-09-13T12:00Z",
                             "/trigger-status?time=2015-09-13T12:00Z"}) {
    auto response = w.call("GET", target);
    CHECK(response.status == 400);
    CHECK(error_of(response) == "missing parameter: id");
  }
  auto pause = w.call("POST", "/pause?paused=true");
  CHECK(pause.status == 400);
  CHECK(error_of(pause) == "missing parameter: id");
}

TEST_CASE("An unknown workflow is a 404") {
  ApiTestWorld w;
  CHECK(w.call("GET", "/workflow-slots?id=nope").status == 404);
  CHECK(w.call("GET", "/trigger-status?id=nope&time=2015-09-13T12:00Z").status == 404);
  CHECK(w.call("POST", "/rerun?id=nope&time=2015-09-13T12:00Z").status == 404);
  CHECK(w.call("POST", "/kill?id=nope&time=2015-09-13T12:00Z").status == 404);
  CHECK(w.call("POST", "/pause?id=nope&paused=true").status == 404);
}

TEST_CASE("A bad or zone-less time is a 400 that names the parameter") {
  ApiTestWorld w;
  auto bad = w.call("GET", "/slot-state?id=wordcount&time=yesterday");
  CHECK(bad.status == 400);
  CHECK(error_of(bad).find("parameter time") != std::string::npos);
  CHECK(w.call("POST", "/scheduler?time=2015-09-13T12:00").status == 400);
  CHECK(w.call("POST", "/rerun?id=wordcount&time=2015-09-13T12:00+02:00").status == 400);
  auto end = w.call("GET", "/workflow-slots?id=wordcount&end=13:00");
  CHECK(end.status == 400);
  CHECK(error_of(end).find("parameter end") != std::string::npos);
}

TEST_CASE("A wrong method is a 405 with an Allow header, an unknown path a 404") {
  ApiTestWorld w;
  auto get_step = w.call("GET", "/scheduler");
  CHECK(get_step.status == 405);
  CHECK(get_step.headers.at("Allow") == "POST");
  auto post_list = w.call("POST", "/workflow-list");
  CHECK(post_list.status == 405);
  CHECK(post_list.headers.at("Allow") == "GET");
  CHECK(w.call("GET", "/no-such-thing").status == 404);
}

TEST_CASE("A step at an explicit time submits the ready slot and reports what it did") {
  ApiTestWorld w;
  const auto report = w.call_json("POST", "/scheduler?time=2015-09-13T12%3A30%3A00Z&ids=wordcount");
  CHECK(report.at("time").as_string() == "2015-09-13T12:30:00.000Z");
  CHECK(report.at("workflows").as_int64() == 1);
  CHECK(report.at("errors").as_array().empty());
  // Step 1 marks the slots READY; step 2 submits the oldest.
  w.call_json("POST", "/scheduler?time=2015-09-13T12:31Z&ids=wordcount");
  REQUIRE(w.service->submitted.size() == 1);
  CHECK(w.service->submitted[0].time == make_time(2015, 9, 6, 13));
  const auto slot = w.call_json("GET", "/slot-state?id=wordcount&time=2015-09-06T13:00Z");
  CHECK(slot.at("status").as_string() == "RUNNING");
  CHECK(slot.at("externalID").as_string() == "job-1");
  CHECK(w.status_of("beta", "2015-09-13T10:00Z") == "none");  // not in ids
}

TEST_CASE("slot-state of a slot with nothing stored is a 404") {
  ApiTestWorld w;
  CHECK(w.call("GET", "/slot-state?id=wordcount&time=2015-09-13T12:00Z").status == 404);
}

TEST_CASE(
    "Rerun of a running slot is a 400 and changes nothing, kill of a running slot kills its job") {
  ApiTestWorld w;
  w.call_json("POST", "/scheduler?time=2015-09-13T12:30Z&ids=beta");
  w.call_json("POST", "/scheduler?time=2015-09-13T12:31Z&ids=beta");
  REQUIRE(w.status_of("beta", "2015-09-13T10:00Z") == "RUNNING");

  auto rerun = w.call("POST", "/rerun?id=beta&time=2015-09-13T10:00Z");
  CHECK(rerun.status == 400);
  CHECK(w.status_of("beta", "2015-09-13T10:00Z") == "RUNNING");

  const auto killed = w.call_json("POST", "/kill?id=beta&time=2015-09-13T10:00Z");
  CHECK(killed.at("status").as_string() == "KILLED");
  CHECK(w.service->killed == std::vector<std::string>{"job-1"});

  auto again = w.call("POST", "/kill?id=beta&time=2015-09-13T10:00Z");
  CHECK(again.status == 400);
  CHECK(w.service->killed.size() == 1);

  const auto rerun_killed = w.call_json("POST", "/rerun?id=beta&time=2015-09-13T10:00Z");
  CHECK(rerun_killed.at("status").as_string() == "WAITING");
  CHECK(w.status_of("beta", "2015-09-13T10:00Z") == "WAITING");
}

TEST_CASE("Rerun and kill of a time that is not a slot of the schedule are 404") {
  ApiTestWorld w;
  CHECK(w.call("POST", "/rerun?id=wordcount&time=2015-09-13T12:30Z").status == 404);
  CHECK(w.call("POST", "/kill?id=wordcount&time=2015-09-13T12:30Z").status == 404);
  CHECK(w.status_of("wordcount", "2015-09-13T12:30Z") == "none");
}

TEST_CASE("Rerun of an old slot outside the window brings it back into the step") {
  ApiTestWorld w;
  const auto rerun = w.call_json("POST", "/rerun?id=wordcount&time=2015-08-01T05:00Z");
  CHECK(rerun.at("status").as_string() == "WAITING");
  w.call_json("POST", "/scheduler?time=2015-09-13T13:30Z&ids=wordcount");
  CHECK(w.status_of("wordcount", "2015-08-01T05:00Z") == "READY");
}

TEST_CASE("A paused workflow is shown paused and skipped by the step until unpaused") {
  ApiTestWorld w;
  const auto paused = w.call_json("POST", "/pause?id=beta&paused=true");
  CHECK(paused.at("paused").as_bool());
  CHECK(w.call_json("GET", "/workflow-slots?id=beta").at("paused").as_bool());
  w.call_json("POST", "/scheduler?time=2015-09-13T12:30Z");
  CHECK(w.status_of("beta", "2015-09-13T10:00Z") == "none");
  w.call_json("POST", "/pause?id=beta&paused=false");
  CHECK_FALSE(w.call_json("GET", "/workflow-slots?id=beta").at("paused").as_bool());
  w.call_json("POST", "/scheduler?time=2015-09-13T12:30Z");
  CHECK(w.status_of("beta", "2015-09-13T10:00Z") == "READY");
}

TEST_CASE("pause with a value other than true or false is a 400 naming the parameter") {
  ApiTestWorld w;
  auto response = w.call("POST", "/pause?id=beta&paused=yes");
  CHECK(response.status == 400);
  CHECK(error_of(response).find("paused") != std::string::npos);
  CHECK(w.call("POST", "/pause?id=beta").status == 400);
}

TEST_CASE("trigger-status answers the trigger's status tree") {
  ApiTestWorld w;
  const auto tree = w.call_json("GET", "/trigger-status?id=wordcount&time=2015-09-13T12:00Z");
  CHECK(tree.at("type").as_string() == "AlwaysTrigger");
  CHECK(tree.at("ready").as_bool());
  CHECK(tree.at("subStatuses").as_array().empty());
  CHECK(tree.as_object().contains("description"));
}

TEST_CASE("clear-cache reloads and version answers the version string") {
  ApiTestWorld w;
  CHECK(w.call_json("POST", "/clear-cache").at("workflows").as_int64() == 2);
  CHECK(w.call_json("GET", "/version").at("version").as_string() == "9.9.9");
}

TEST_CASE("Only POSTs to mutating endpoints count as mutations, under /api/v1/ too") {
  ApiTestWorld w;
  const Api& api = *w.api;
  auto request = [](std::string method, std::string path) {
    HttpServerRequest r;
    r.method = std::move(method);
    r.path = std::move(path);
    return r;
  };
  CHECK(api.is_mutation(request("POST", "/scheduler")));
  CHECK(api.is_mutation(request("POST", "/kill")));
  CHECK(api.is_mutation(request("POST", "/api/v1/kill/")));
  CHECK_FALSE(api.is_mutation(request("GET", "/scheduler")));
  CHECK_FALSE(api.is_mutation(request("GET", "/workflow-slots")));
  CHECK_FALSE(api.is_mutation(request("POST", "/nowhere")));
}

TEST_CASE("The worker lets the running job finish and cancels the queued ones when stopped") {
  SerialWorker worker;
  std::promise<void> started, release;
  auto released = release.get_future().share();
  std::vector<int> ran;
  std::atomic<int> cancelled{0};
  REQUIRE(worker.post([&] {
    started.set_value();
    released.wait();
    ran.push_back(1);
  }));
  REQUIRE(worker.post([&] { ran.push_back(2); }, [&] { ++cancelled; }));
  started.get_future().wait();
  std::thread stopper([&] { worker.stop(); });
  for (int i = 0; i < 10000 && !worker.stopping(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  release.set_value();
  stopper.join();
  CHECK(ran == std::vector<int>{1});
  CHECK(cancelled == 1);
  CHECK_FALSE(worker.post([] {}, [&] { ++cancelled; }));
  CHECK(cancelled == 1);
}

TEST_CASE("The worker runs jobs one at a time in the order posted") {
  SerialWorker worker;
  std::vector<int> ran;
  std::promise<void> all_done;
  for (int i = 0; i < 50; ++i) REQUIRE(worker.post([&ran, i] { ran.push_back(i); }));
  REQUIRE(worker.post([&] { all_done.set_value(); }));
  all_done.get_future().wait();
  REQUIRE(ran.size() == 50);
  CHECK(std::is_sorted(ran.begin(), ran.end()));
}

TEST_CASE("The server handler answers mutations through the worker and 503 once it stopped") {
  ApiTestWorld w;
  SerialWorker worker;
  auto handler = make_api_http_handler(*w.api, worker);
  auto run = [&](const std::string& method, const std::string& target) {
    HttpServerRequest request;
    request.method = method;
    request.target = target;
    REQUIRE(parse_request_target(target, request.path, request.query));
    std::promise<HttpServerResponse> answer;
    handler(request, [&answer](HttpServerResponse r) { answer.set_value(std::move(r)); });
    return answer.get_future().get();
  };
  CHECK(run("POST", "/pause?id=beta&paused=true").status == 200);
  CHECK(w.call_json("GET", "/workflow-slots?id=beta").at("paused").as_bool());
  CHECK(run("GET", "/workflow-list").status == 200);
  worker.stop();
  CHECK(run("POST", "/pause?id=beta&paused=false").status == 503);
  CHECK(run("GET", "/version").status == 200);
}

TEST_CASE("The periodic stepper steps on its own and stops when asked") {
  ApiTestWorld w;
  SerialWorker worker;
  PeriodicStepper stepper(*w.api, worker, std::chrono::milliseconds(10));
  // Bounded poll: the first steps come after a few intervals.
  for (int i = 0; i < 1000 && stepper.steps() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stepper.stop();
  const int steps = stepper.steps();
  CHECK(steps >= 2);
  CHECK(w.status_of("beta", "2015-09-13T10:00Z") != "none");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(stepper.steps() == steps);
}

TEST_CASE("Slots are printed as valid JSON whatever their external id holds") {
  ApiTestWorld w;
  SlotState state = SlotState::waiting(SlotId{"wordcount", make_time(2015, 9, 13, 12)});
  state.status = SlotStatus::kRunning;
  state.external_id = "job \"7\" \\ ü\n";
  state.retry_count = 3;
  REQUIRE(w.db->put_slots({state}));
  const auto one = w.call_json("GET", "/slot-state?id=wordcount&time=2015-09-13T12:00Z");
  CHECK(one.at("externalID").as_string() == "job \"7\" \\ ü\n");
  CHECK(one.at("retryCount").as_int64() == 3);
  const auto all = w.call_json("GET", "/workflow-slots?id=wordcount&end=2015-09-13T12:00:00.001Z");
  CHECK(all.at("slots").at(0).at("externalID").as_string() == "job \"7\" \\ ü\n");
  CHECK(all.at("slots").at(0).at("time").as_string() == "2015-09-13T12:00:00.000Z");
  CHECK(all.at("slots").at(0).at("status").as_string() == "RUNNING");
}

namespace {
class SwitchingSource final : public WorkflowSource {
 public:
  WorkflowConfigPtr load() override { return current; }
  void clear_cache() override {}
  WorkflowConfigPtr current;
};
}  // namespace

TEST_CASE("workflow-list answers the reloaded ids after a reload (its bytes are kept per load)") {
  auto source = std::make_unique<SwitchingSource>();
  SwitchingSource& switching = *source;
  ApiTestWorld w(std::move(source));
  auto config = std::make_shared<WorkflowConfig>();
  config->workflows.emplace("one", w.workflow("one", Time{}));
  switching.current = config;
  CHECK(w.call("GET", "/workflow-list").body == R"({"ids":["one"]})");
  CHECK(w.call("GET", "/workflow-list").body == R"({"ids":["one"]})");

  auto next = std::make_shared<WorkflowConfig>();
  next->workflows.emplace("two", w.workflow("two", Time{}));
  next->workflows.emplace("three", w.workflow("three", Time{}));
  switching.current = next;
  REQUIRE(w.call("POST", "/clear-cache").status == 200);
  CHECK(w.call("GET", "/workflow-list").body == R"({"ids":["three","two"]})");
  CHECK(w.call("GET", "/api/v1/workflow-list").body == R"({"ids":["three","two"]})");
}
