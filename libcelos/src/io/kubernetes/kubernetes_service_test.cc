// The Kubernetes service against a small in-memory API server (behind the fake HTTP client):
// the calls it makes, adoption after a crash, one list per namespace, errors. The real
// protocol is checked end to end against test/kubernetes/fake_kube_apiserver.py.
#include "celos/kubernetes_service.h"

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "celos/time.h"
#include "testing/fakes.h"

using namespace celos;
namespace json = boost::json;

namespace {

const SlotId kKubernetesServiceSlot{"wordcount", make_time(2015, 9, 12, 20, 0, 0)};

// Jobs by "<namespace>/<name>", pods as given; answers as an API server would, or as told.
struct MiniKube {
  std::shared_ptr<testing::FakeHttpClient> http = std::make_shared<testing::FakeHttpClient>();
  std::map<std::string, json::value> jobs;
  json::array pods;
  std::vector<int> forced;  // the next answers' status codes (then as usual)

  MiniKube() {
    http->on([this](const HttpRequest& r) -> std::optional<Result<HttpResponse>> {
      if (!forced.empty()) {
        const int code = forced.front();
        forced.erase(forced.begin());
        return HttpResponse{
            code, {{"Retry-After", "0"}}, R"({"kind":"Status","message":"told so"})"};
      }
      return answer(r);
    });
  }

  static HttpResponse ok(int code, const json::value& body) {
    return HttpResponse{code, {}, json::serialize(body)};
  }

  HttpResponse answer(const HttpRequest& r) {
    const std::string url = r.url.substr(std::string("http://kube").size());
    const std::string path = url.substr(0, url.find('?'));
    const std::string jobs_of = "/apis/batch/v1/namespaces/";
    if (path.starts_with("/api/v1/namespaces/") && path.ends_with("/pods")) {
      return ok(200, json::object{{"items", pods}, {"metadata", json::object{}}});
    }
    if (path.ends_with("/log")) return HttpResponse{200, {}, "line 1\nline 2\n"};
    const std::string rest = path.substr(jobs_of.size());  // ns/jobs[/name]
    const std::string ns = rest.substr(0, rest.find('/'));
    const std::size_t at = rest.find("/jobs/");
    const std::string key = at == std::string::npos ? "" : ns + "/" + rest.substr(at + 6);
    if (r.method == "POST") {
      json::value job = json::parse(r.body);
      const std::string k = ns + "/" + std::string(job.at("metadata").at("name").as_string());
      if (jobs.count(k)) return ok(409, json::object{{"message", "already exists"}});
      job.as_object()["status"] = json::object{};
      jobs[k] = job;
      return ok(201, job);
    }
    if (r.method == "GET" && key.empty()) {
      json::array items;
      for (const auto& [k, job] : jobs) {
        if (k.starts_with(ns + "/")) items.push_back(job);
      }
      return ok(200, json::object{{"items", items}, {"metadata", json::object{}}});
    }
    auto found = jobs.find(key);
    if (found == jobs.end()) return ok(404, json::object{{"message", "not found"}});
    if (r.method == "GET") return ok(200, found->second);
    if (r.method == "DELETE") {
      jobs.erase(found);
      return ok(200, json::object{});
    }
    json::value& suspend = found->second.at("spec").as_object()["suspend"];
    if (!suspend.as_bool()) return ok(422, json::object{{"message", "testing value failed"}});
    suspend = false;
    return ok(200, found->second);
  }

  ExternalServicePtr service(const std::string& ns = "etl") {
    KubernetesServiceOptions o;
    o.namespace_ = ns;
    o.image = "debian:12";
    o.command = {"true"};
    o.max_retry_after = std::chrono::milliseconds(1000);
    o.watch = false;  // a scripted server without watches: every status lists
    KubeCredentials c;
    c.server = "http://kube";
    c.token = "t0k";
    return make_kubernetes_external_service(o, c, http);
  }

  std::vector<std::string> calls() const {
    std::vector<std::string> out;
    for (const auto& r : http->requests) {
      out.push_back(r.method + " " + r.url.substr(std::string("http://kube").size()));
    }
    return out;
  }

  void set_status(const std::string& key, const std::string& status) {
    jobs.at(key).as_object()["status"] = json::parse(status);
  }
};

}  // namespace

std::string header(const HttpRequest& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

TEST_CASE("submit creates a suspended Job and start resumes it once, with the token over http") {
  MiniKube kube;
  auto service = kube.service();
  const std::string id = service->submit(kKubernetesServiceSlot).value();
  CHECK(id == "etl/wordcount-20150912t200000-1");
  CHECK(kube.jobs.at(id).at("spec").at("suspend") == true);
  const HttpRequest& create = kube.http->requests.at(0);
  CHECK(header(create, "Authorization") == "Bearer t0k");
  CHECK(kube.calls() == std::vector<std::string>{"POST /apis/batch/v1/namespaces/etl/jobs"});
  REQUIRE(service->start(kKubernetesServiceSlot, id));
  CHECK(kube.jobs.at(id).at("spec").at("suspend") == false);
  const HttpRequest& resume = kube.http->requests.at(1);
  CHECK(resume.method == "PATCH");
  CHECK(header(resume, "Content-Type") == "application/json-patch+json");
  CHECK(json::parse(resume.body) == json::parse(R"([{"op":"test","path":"/spec/suspend",
    "value":true},{"op":"replace","path":"/spec/suspend","value":false}])"));
  CHECK(service->start(kKubernetesServiceSlot,
                       id));  // already resumed: the test fails (422), no error
  CHECK(service->status(kKubernetesServiceSlot, id).value() == JobState::kRunning);
}

TEST_CASE("a submit after a crash adopts the suspended Job and never resumes a started one") {
  MiniKube kube;
  auto service = kube.service();
  const std::string first =
      service->submit(kKubernetesServiceSlot).value();              // the crash: never recorded
  CHECK(service->submit(kKubernetesServiceSlot).value() == first);  // adopted, not created again
  CHECK(kube.jobs.size() == 1);
  REQUIRE(service->start(kKubernetesServiceSlot, first));
  // The attempt ran (not suspended any more): the next submit makes attempt 2.
  const std::string second = service->submit(kKubernetesServiceSlot).value();
  CHECK(second == "etl/wordcount-20150912t200000-2");
  CHECK(kube.jobs.at(second).at("spec").at("suspend") == true);
  // A Job of that name that belongs to another slot is not adopted either.
  kube.jobs.erase(second);
  const SlotId other{"wordcount", kKubernetesServiceSlot.time + std::chrono::hours(1)};
  json::value foreign = kube.jobs.at(first);
  foreign.at("metadata").as_object()["name"] = "wordcount-20150912t200000-2";
  foreign.at("metadata").at("annotations").as_object()["celos.slot"] = format_time(other.time);
  foreign.at("spec").as_object()["suspend"] = true;
  kube.jobs["etl/wordcount-20150912t200000-2"] = foreign;
  CHECK(service->submit(kKubernetesServiceSlot).value() == "etl/wordcount-20150912t200000-3");
}

TEST_CASE("the status of many jobs is one list per namespace, and pods only when one waits") {
  MiniKube kube;
  auto etl = kube.service("etl");
  auto web = kube.service("web");
  std::vector<ExternalService::Job> jobs;
  for (int h = 0; h < 4; ++h) {
    const SlotId slot{"wordcount", kKubernetesServiceSlot.time + std::chrono::hours(h)};
    jobs.push_back({slot, (h < 3 ? etl : web)->submit(slot).value()});
  }
  kube.set_status(jobs[0].external_id, R"({"conditions":[{"type":"Complete","status":"True"}]})");
  kube.set_status(jobs[1].external_id, R"({"conditions":[{"type":"Failed","status":"True",
    "reason":"BackoffLimitExceeded","message":"Job has reached the specified backoff limit"}]})");
  kube.jobs.erase(jobs[2].external_id);  // deleted behind celos's back
  kube.jobs.at(jobs[3].external_id).at("spec").as_object()["suspend"] = false;
  kube.http->requests.clear();
  auto answers = etl->status_many(jobs);
  CHECK(kube.calls() == std::vector<std::string>{
                            "GET /apis/batch/v1/namespaces/etl/jobs?labelSelector=celos.workflow",
                            "GET /apis/batch/v1/namespaces/web/jobs?labelSelector=celos.workflow"});
  CHECK(answers.at(jobs[0].external_id).value() == JobState::kSuccess);
  CHECK(answers.at(jobs[1].external_id).value().message ==
        "Kubernetes Job " + jobs[1].external_id +
            " failed: BackoffLimitExceeded (Job has reached the specified backoff limit)");
  const ExternalStatus gone = answers.at(jobs[2].external_id).value();
  CHECK(gone.state == JobState::kFailure);
  CHECK(gone.message.find("deleted behind celos's back") != std::string::npos);
  CHECK(answers.at(jobs[3].external_id).value() == JobState::kRunning);

  // A pod that no node takes: still running, and the reason is the message.
  kube.set_status(jobs[3].external_id, R"({"active":1})");
  const std::string name = jobs[3].external_id.substr(4);
  kube.pods.push_back(json::parse(R"({"metadata":{"name":")" + name +
                                  R"(-x","labels":{"job-name":")" + name +
                                  R"("}},"status":{"phase":"Pending","conditions":[{"type":
    "PodScheduled","status":"False","reason":"Unschedulable","message":"0/1 nodes"}]}})"));
  kube.http->requests.clear();
  const ExternalStatus waiting = web->status(jobs[3].slot, jobs[3].external_id).value();
  CHECK(waiting.state == JobState::kRunning);
  CHECK(waiting.message == "pod " + name + "-x is Unschedulable: 0/1 nodes");
  CHECK(kube.calls().size() == 2);
  CHECK(kube.calls()[1] ==
        "GET /api/v1/namespaces/web/pods?labelSelector=celos.workflow&fieldSelector=status.phase%"
        "3DPending");
}

TEST_CASE("kill deletes the Job in the background, a Job already gone is no error") {
  MiniKube kube;
  auto service = kube.service();
  const std::string id = service->submit(kKubernetesServiceSlot).value();
  REQUIRE(service->kill(kKubernetesServiceSlot, id));
  CHECK(kube.jobs.empty());
  CHECK(kube.calls().back() ==
        "DELETE /apis/batch/v1/namespaces/etl/jobs/wordcount-20150912t200000-1"
        "?propagationPolicy=Background");
  CHECK(service->kill(kKubernetesServiceSlot, id));
  CHECK(!service->kill(kKubernetesServiceSlot, "no-namespace"));
}

TEST_CASE("API errors: refusals, a short 429 retried, and 401 shown as the health") {
  MiniKube kube;
  auto service = kube.service();
  kube.forced = {403};
  auto refused = service->submit(kKubernetesServiceSlot);
  REQUIRE(!refused);
  CHECK(refused.error().code == ErrorCode::kInvalid);
  CHECK(refused.error().message ==
        "creating Kubernetes Job etl/wordcount-20150912t200000-1: 403 Forbidden: told so");
  kube.forced = {429};
  CHECK(service->submit(kKubernetesServiceSlot).value() ==
        "etl/wordcount-20150912t200000-1");  // retried once
  kube.forced = {429, 429};
  auto busy = service->start(kKubernetesServiceSlot, "etl/wordcount-20150912t200000-1");
  REQUIRE(!busy);
  CHECK(busy.error().code == ErrorCode::kFailed);
  CHECK(busy.error().message.find("429 Too Many Requests") != std::string::npos);
  kube.forced = {401};
  auto status = service->status(kKubernetesServiceSlot, "etl/wordcount-20150912t200000-1");
  REQUIRE(!status);
  CHECK(status.error().message.find("401 Unauthorized") != std::string::npos);
  CHECK(kubernetes_health().value() == "401 Unauthorized from http://kube: told so");
  CHECK(service->status(kKubernetesServiceSlot, "etl/wordcount-20150912t200000-1"));
  CHECK(kubernetes_health().value() == "ok");
}

TEST_CASE("unreadable credentials leave the slot READY (a failure, not a refusal)") {
  KubernetesServiceOptions o;
  o.image = "debian:12";
  o.kubeconfig = "/nonexistent/kubeconfig";
  auto service = make_kubernetes_external_service(o);
  auto submitted = service->submit(kKubernetesServiceSlot);
  REQUIRE(!submitted);
  CHECK(submitted.error().code != ErrorCode::kInvalid);
  CHECK(submitted.error().message == "cannot read the kubeconfig /nonexistent/kubeconfig");
}

// Not run by default (`celos_kubernetes_test "[.bench]"`): celos's own share of a status step
// over 10,000 RUNNING Jobs, the lists answered in-process (bench/README, Kubernetes status).
TEST_CASE("status of 10,000 Jobs, lists answered in-process", "[.bench]") {
  MiniKube kube;
  auto service = kube.service();
  std::vector<ExternalService::Job> jobs;
  for (int i = 0; i < 10000; ++i) {
    const SlotId slot{fmt::format("wf-{:03}", i / 100),
                      kKubernetesServiceSlot.time + std::chrono::minutes(i % 100)};
    jobs.push_back({slot, service->submit(slot).value()});
    kube.jobs.at(jobs.back().external_id).at("spec").as_object()["suspend"] = false;  // resumed
    kube.set_status(jobs.back().external_id, R"({"active":1,"startTime":"2015-09-12T20:00:00Z"})");
    const std::string name = jobs.back().external_id.substr(4);
    kube.pods.push_back(json::parse(R"({"metadata":{"name":")" + name +
                                    R"(-x","labels":{"job-name":")" + name +
                                    R"("}},"status":{"phase":"Pending","conditions":[{"type":
      "PodScheduled","status":"False","reason":"Unschedulable","message":"0/1 nodes"}]}})"));
  }
  // The answers as text once, so that only celos's work is timed.
  const HttpResponse job_list = MiniKube::ok(
      200, json::parse(
               kube.answer({"GET", "http://kube/apis/batch/v1/namespaces/etl/jobs", {}, "", false})
                   .body));
  const HttpResponse pod_list =
      kube.answer({"GET", "http://kube/api/v1/namespaces/etl/pods", {}, "", false});
  auto fast = std::make_shared<testing::FakeHttpClient>();
  fast->on([&](const HttpRequest& r) -> std::optional<Result<HttpResponse>> {
    return r.url.find("/pods") != std::string::npos ? pod_list : job_list;
  });
  KubernetesServiceOptions o;
  o.namespace_ = "etl";
  o.image = "debian:12";
  KubeCredentials c;
  c.server = "http://kube";
  auto timed = make_kubernetes_external_service(o, c, fast);
  for (int run = 0; run < 3; ++run) {
    const auto start = std::chrono::steady_clock::now();
    auto answers = timed->status_many(jobs);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    CHECK(answers.size() == 10000);
    CHECK(answers.at(jobs[0].external_id).value().message.find("Unschedulable") !=
          std::string::npos);
    WARN(fmt::format("status_many of 10,000 Jobs: {} ms ({} + {} bytes of lists)", ms.count(),
                     job_list.body.size(), pod_list.body.size()));
  }
}
