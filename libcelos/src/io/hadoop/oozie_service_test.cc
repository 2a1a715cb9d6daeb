#include <catch2/catch.hpp>

#include "celos/hadoop.h"
#include "io/hadoop/hadoop_test_util.h"

namespace celos {
namespace {

using celos::testing::FakeHttpClient;
using hadoop_test::answer;
using hadoop_test::recorded;
using hadoop_test::route;
using OozieProperties = std::map<std::string, std::string>;

const std::string kUrl = "http://oozie:11000/oozie";
const std::string kJob = "0000001-150911205802478-oozie-oozi-W";

std::string job_info(const std::string& status) {
  std::string body = recorded("oozie_job_info.json");
  for (auto at = body.find("@STATUS@"); at != std::string::npos; at = body.find("@STATUS@")) {
    body.replace(at, 8, status);
  }
  return body;
}

SlotId slot() { return SlotId{"wordcount", make_time(2015, 9, 12, 20)}; }

struct OozieFixture {
  std::shared_ptr<FakeHttpClient> http = std::make_shared<FakeHttpClient>();
  OozieProperties workflow_properties{{"oozie.wf.application.path", "/wordcount/workflow.xml"}};
  ExternalServicePtr make(std::string user = "", OozieProperties defaults = {}) {
    return make_oozie_external_service(
        http, kUrl + "/", std::move(defaults),
        [this](const SlotId&) -> Result<OozieProperties> { return workflow_properties; },
        std::move(user));
  }
};

TEST_CASE("Slot properties: defaults < workflow properties < slot variables") {
  OozieProperties defaults{
      {"queue", "default"}, {"year", "1999"}, {"out", "/d/${year}"}, {"k", "d"}};
  OozieProperties own{{"queue", "etl"},
                      {"in", "/logs/${year}-${month}-${day}/${hour}00"},
                      {"celosWorkflowName", "mine"}};
  OozieProperties p =
      oozie_slot_properties(defaults, own, "wordcount", make_time(2015, 9, 2, 7, 5, 3));
  CHECK(p == OozieProperties{{"queue", "etl"},
                             {"in", "/logs/2015-09-02/0700"},
                             {"out", "/d/2015"},
                             {"k", "d"},
                             {"year", "2015"},
                             {"month", "09"},
                             {"day", "02"},
                             {"hour", "07"},
                             {"minute", "05"},
                             {"second", "03"},
                             {"celosWorkflowName", "wordcount@2015-09-02T07:05:03Z"}});
}

TEST_CASE_METHOD(OozieFixture,
                 "submit posts an XML configuration to v2/jobs and returns the job id") {
  http->on(route("POST", kUrl + "/v2/jobs", answer(201, recorded("oozie_submit.json"))));
  workflow_properties["tricky"] = "a<b & \"c\" 'd' >";
  auto id = make()->submit(slot());
  REQUIRE(id);
  CHECK(*id == kJob);
  REQUIRE(http->requests.size() == 1);
  const HttpRequest& r = http->requests[0];
  CHECK(r.url == kUrl + "/v2/jobs");
  CHECK(r.headers == HttpHeaders{{"Content-Type", "application/xml;charset=UTF-8"}});
  CHECK(r.body.find("<configuration>") != std::string::npos);
  CHECK(r.body.find("<property><name>oozie.wf.application.path</name>"
                    "<value>/wordcount/workflow.xml</value></property>") != std::string::npos);
  CHECK(r.body.find("<property><name>celosWorkflowName</name>"
                    "<value>wordcount@2015-09-12T20:00Z</value></property>") != std::string::npos);
  CHECK(r.body.find("<property><name>hour</name><value>20</value></property>") !=
        std::string::npos);
  CHECK(r.body.find("<value>a&lt;b &amp; &quot;c&quot; &apos;d&apos; &gt;</value>") !=
        std::string::npos);
  CHECK(r.body.find("user.name") == std::string::npos);
}

TEST_CASE_METHOD(OozieFixture, "submit_with replaces ${inputs.<id>} in the properties") {
  http->on(route("POST", kUrl + "/v2/jobs", answer(201, recorded("oozie_submit.json"))));
  workflow_properties["inputDir"] = "${inputs.clicks}";
  SubmitContext context;
  context.variables["inputs.clicks"] = "/c/1,/c/2";
  REQUIRE(make()->submit_with(slot(), context));
  CHECK(http->requests.at(0).body.find("<value>/c/1,/c/2</value>") != std::string::npos);
}

TEST_CASE_METHOD(OozieFixture, "The configured user goes into user.name, property and query") {
  http->on(route("POST", kUrl + "/v2/jobs", answer(201, recorded("oozie_submit.json"))));
  http->on(route("PUT", kUrl + "/v2/job/", answer(200, "")));
  auto oozie = make("celos");
  REQUIRE(oozie->submit(slot()));
  REQUIRE(oozie->start(slot(), kJob));
  CHECK(http->requests[0].url == kUrl + "/v2/jobs?user.name=celos");
  CHECK(http->requests[0].body.find("<property><name>user.name</name><value>celos</value>") !=
        std::string::npos);
  CHECK(http->requests[1].url == kUrl + "/v2/job/" + kJob + "?action=start&user.name=celos");
}

TEST_CASE_METHOD(OozieFixture,
                 "A properties function that fails fails the submit before any request") {
  auto oozie = make_oozie_external_service(
      http, kUrl, {}, [](const SlotId&) -> Result<OozieProperties> { return fail("JS threw"); },
      "");
  auto id = oozie->submit(slot());
  REQUIRE_FALSE(id);
  CHECK(id.error().message == "JS threw");
  CHECK(http->requests.empty());
}

TEST_CASE_METHOD(OozieFixture, "Oozie's error headers are carried into the error") {
  http->on(
      route("POST", kUrl + "/v2/jobs",
            answer(400, "<html>Bad Request</html>",
                   {{"oozie-error-code", "E0301"},
                    {"oozie-error-message", "E0301: Invalid resource [/nope/workflow.xml]"}})));
  auto id = make()->submit(slot());
  REQUIRE_FALSE(id);
  CHECK(id.error().message.find("E0301: Invalid resource [/nope/workflow.xml]") !=
        std::string::npos);
  CHECK(id.error().message.find("400") != std::string::npos);
  CHECK(id.error().message.find("wordcount@2015-09-12T20:00:00.000Z") != std::string::npos);
}

TEST_CASE_METHOD(OozieFixture, "An unreachable Oozie is an error naming the slot and the URL") {
  http->on(route("POST", kUrl, fail("POST " + kUrl + "/v2/jobs failed: Connection refused")));
  auto id = make()->submit(slot());
  REQUIRE_FALSE(id);
  CHECK(id.error().message.find("Connection refused") != std::string::npos);
  CHECK(id.error().message.find("wordcount@") != std::string::npos);
}

TEST_CASE_METHOD(OozieFixture, "A submit answer without an id is an error") {
  http->on(route("POST", kUrl + "/v2/jobs", answer(201, "{}")));
  CHECK_FALSE(make()->submit(slot()));
}

TEST_CASE_METHOD(OozieFixture, "start is PUT action=start and a refusal is an error") {
  http->on(route("PUT", kUrl + "/v2/job/" + kJob + "?action=start",
                 answer(409, "", {{"oozie-error-code", "E0810"}})));
  auto r = make()->start(slot(), kJob);
  REQUIRE_FALSE(r);
  CHECK(http->requests[0].method == "PUT");
  CHECK(r.error().message.find("E0810") != std::string::npos);
}

TEST_CASE_METHOD(OozieFixture, "status maps Oozie's job states to running, success and failure") {
  using S = ExternalStatus;
  for (auto [oozie_status, expected] :
       {std::pair{"PREP", S::kSubmitted}, std::pair{"RUNNING", S::kRunning},
        std::pair{"SUCCEEDED", S::kSuccess}, std::pair{"KILLED", S::kFailure},
        std::pair{"FAILED", S::kFailure}, std::pair{"SUSPENDED", S::kFailure}}) {
    auto client = std::make_shared<FakeHttpClient>();
    client->on(
        route("GET", kUrl + "/v2/job/" + kJob + "?show=info", answer(200, job_info(oozie_status))));
    auto oozie = make_oozie_external_service(client, kUrl, {}, nullptr, "");
    auto s = oozie->status(slot(), kJob);
    INFO(oozie_status);
    REQUIRE(s);
    CHECK(*s == expected);
  }
}

TEST_CASE_METHOD(OozieFixture, "An unknown Oozie job state is an error quoting it") {
  http->on(route("GET", kUrl + "/v2/job/", answer(200, job_info("RUNNINGISH"))));
  auto s = make()->status(slot(), kJob);
  REQUIRE_FALSE(s);
  CHECK(s.error().message.find("RUNNINGISH") != std::string::npos);
}

TEST_CASE_METHOD(OozieFixture, "status of a job Oozie does not know is an error") {
  http->on(route("GET", kUrl + "/v2/job/",
                 answer(400, "",
                        {{"oozie-error-code", "E0604"},
                         {"oozie-error-message", "E0604: Job does not exist"}})));
  auto s = make()->status(slot(), kJob);
  REQUIRE_FALSE(s);
  CHECK(s.error().message.find("Job does not exist") != std::string::npos);
}

TEST_CASE_METHOD(OozieFixture, "kill is PUT action=kill") {
  http->on(route("PUT", kUrl + "/v2/job/" + kJob + "?action=kill", answer(200, "")));
  REQUIRE(make()->kill(slot(), kJob));
  CHECK(http->requests.size() == 1);
}

TEST_CASE_METHOD(OozieFixture, "kill of a job that has already ended is not an error") {
  http->on(route("PUT", kUrl + "/v2/job/", answer(400, "", {{"oozie-error-code", "E0725"}})));
  http->on(route("GET", kUrl + "/v2/job/", answer(200, job_info("SUCCEEDED"))));
  CHECK(make()->kill(slot(), kJob));
}

TEST_CASE_METHOD(OozieFixture, "kill refused for a running job is an error") {
  http->on(route("PUT", kUrl + "/v2/job/", answer(500, "", {{"oozie-error-code", "E0000"}})));
  http->on(route("GET", kUrl + "/v2/job/", answer(200, job_info("RUNNING"))));
  auto r = make()->kill(slot(), kJob);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("E0000") != std::string::npos);
}

TEST_CASE_METHOD(OozieFixture, "a submission Oozie refuses with a 4xx is marked as refused") {
  http->on(route("POST", kUrl + "/v2/jobs",
                 answer(400, "",
                        {{"oozie-error-code", "E0405"},
                         {"oozie-error-message", "E0405: no application path"}})));
  auto id = make()->submit(slot());
  REQUIRE_FALSE(id);
  CHECK(id.error().code == ErrorCode::kInvalid);
  CHECK(id.error().message.find("E0405") != std::string::npos);
}

TEST_CASE_METHOD(OozieFixture,
                 "a submission Oozie fails with a 5xx or cannot answer is not a refusal") {
  http->on(route("POST", kUrl + "/v2/jobs", answer(503, "")));
  auto id = make()->submit(slot());
  REQUIRE_FALSE(id);
  CHECK(id.error().code == ErrorCode::kFailed);
  auto down = std::make_shared<FakeHttpClient>();
  down->on([](const HttpRequest&) -> std::optional<Result<HttpResponse>> {
    return Result<HttpResponse>(fail("connection refused", ErrorCode::kUnavailable));
  });
  auto unreachable = make_oozie_external_service(down, kUrl, {}, nullptr, "");
  CHECK(unreachable->submit(slot()).error().code == ErrorCode::kUnavailable);
}

TEST_CASE_METHOD(OozieFixture,
                 "status_many asks the job list once and falls back per job for the missing") {
  const std::string other = "0000002-150911205802478-oozie-oozi-W";
  const std::string gone = "0000003-150911205802478-oozie-oozi-W";
  http->on(route("GET", kUrl + "/v2/jobs?jobtype=wf&filter=",
                 answer(200, R"({"total":2,"offset":1,"len":50,"workflows":[)"
                             R"({"id":")" +
                                 kJob +
                                 R"(","status":"RUNNING"},)"
                                 R"({"id":")" +
                                 other + R"(","status":"SUCCEEDED"}]})")));
  http->on(route("GET", kUrl + "/v2/job/" + gone, answer(200, job_info("KILLED"))));
  auto answers = make()->status_many({{slot(), kJob}, {slot(), other}, {slot(), gone}});
  CHECK(http->requests.size() == 2);
  CHECK(http->requests[0].url.find("filter=id%3D" + kJob) != std::string::npos);
  REQUIRE(answers.size() == 3);
  CHECK(answers.at(kJob).value() == JobState::kRunning);
  CHECK(answers.at(other).value() == JobState::kSuccess);
  CHECK(answers.at(gone).value() == JobState::kFailure);
  CHECK(make()->traits().batches_status);
  CHECK_FALSE(make()->traits().writes_done_flags);
  CHECK_FALSE(make()->traits().keeps_job_output);
}

TEST_CASE_METHOD(OozieFixture, "status_many falls back to one call per job when the list fails") {
  http->on(route("GET", kUrl + "/v2/jobs?", answer(500, "")));
  http->on(route("GET", kUrl + "/v2/job/", answer(200, job_info("RUNNING"))));
  auto answers = make()->status_many({{slot(), kJob}});
  CHECK(http->requests.size() == 2);
  CHECK(answers.at(kJob).value() == JobState::kRunning);
}

TEST_CASE_METHOD(OozieFixture, "describe names the Oozie URL") {
  CHECK(make()->describe() == "oozie " + kUrl);
}

}  // namespace
}  // namespace celos
