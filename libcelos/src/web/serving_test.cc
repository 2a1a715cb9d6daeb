// Issue 33: the request pool and deadline timer, the server handler's deadlines (reads, a
// mutation's wait for the worker) and the cluster handler's refusals (forged forwards, a lease
// that names this node).
#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <thread>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "celos/api.h"
#include "celos/api_serving.h"
#include "celos/cluster_api.h"
#include "celos/request_pool.h"
#include "celos/state_db.h"
#include "testing/api_world.h"

namespace {

namespace json = boost::json;
using namespace celos;
using namespace std::chrono_literals;
using celos::testing::WorldOptions;

// A gate that blocks the routes behind it until opened (bounded waits: a test that fails never
// hangs).
struct Gate {
  std::promise<void> promise;
  std::shared_future<void> future = promise.get_future().share();
  void open() { promise.set_value(); }
  void wait() const { future.wait_for(30s); }
};

struct MemAudit final : AuditSink {
  std::mutex mutex;
  std::vector<AuditRecord> records;
  void append(const AuditRecord& record) override {
    std::lock_guard lock(mutex);
    records.push_back(record);
  }
  Result<std::vector<AuditRecord>> latest(std::optional<Time>, std::size_t) override {
    std::lock_guard lock(mutex);
    return records;
  }
  std::vector<int> statuses() {
    std::lock_guard lock(mutex);
    std::vector<int> out;
    for (const auto& r : records) out.push_back(r.status);
    return out;
  }
};

// An Api over no workflows, with a slow read (GET /api/v1/slow) and a slow mutation (POST
// /api/v1/slow) behind `gate`.
struct ServingWorld : celos::testing::ApiWorld {
  MemAudit audit;
  Gate gate;
  std::atomic<int> mutations{0};

  ServingWorld() : ApiWorld({.db = WorldOptions::Db::kLocalDisk}) {
    serve({.audit = &audit});
    api->routes().add({.method = "GET", .path = "/slow", .handler = [this](const auto&) {
                         gate.wait();
                         return HttpServerResponse{};
                       }});
    api->routes().add(
        {.method = "POST", .path = "/slow", .mutates = true, .handler = [this](const auto&) {
           ++mutations;
           gate.wait();
           return HttpServerResponse{};
         }});
  }
  ~ServingWorld() override { api.reset(); }  // it points at audit, which goes first
};

HttpServerRequest request_of(const std::string& method, const std::string& target) {
  HttpServerRequest request;
  request.method = method;
  request.target = target;
  request.remote = "10.0.0.9:1234";
  REQUIRE(parse_request_target(target, request.path, request.query));
  return request;
}

// Calls the handler; the answer arrives later through the future.
std::future<HttpServerResponse> call(const AsyncHttpHandler& handler, HttpServerRequest request) {
  auto answer = std::make_shared<std::promise<HttpServerResponse>>();
  auto future = answer->get_future();
  handler(std::move(request), [answer](HttpServerResponse r) { answer->set_value(std::move(r)); });
  return future;
}

// POST /api/v1/grouped, a mutation whose waiting requests run together through `group`.
Route grouped_route(RouteGroupHandler group) {
  return {.method = "POST",
          .path = "/grouped",
          .mutates = true,
          .handler = [](const auto&) { return HttpServerResponse{}; },
          .group_handler = std::move(group)};
}

std::string serving_error_of(const HttpServerResponse& response) {
  return std::string(json::parse(response.body).at("error").as_string());
}

}  // namespace

TEST_CASE("The request pool runs jobs, refuses past its queue and cancels what never ran") {
  std::promise<void> release;
  auto released = release.get_future().share();
  std::atomic<int> ran{0}, cancelled{0};
  std::atomic<bool> started{false};
  {
    RequestPool pool(1, 2);
    CHECK(pool.threads() == 1);
    REQUIRE(pool.post([&] {
      started = true;
      released.wait_for(30s);
      ++ran;
    }));
    // The one thread is busy: two wait, the third is refused.
    for (int i = 0; i < 2000 && !started; ++i) std::this_thread::sleep_for(5ms);
    CHECK(pool.busy() == 1);
    CHECK(pool.post([&] { ++ran; }, [&] { ++cancelled; }));
    CHECK(pool.post([&] { ++ran; }, [&] { ++cancelled; }));
    CHECK_FALSE(pool.post([&] { ++ran; }));
    release.set_value();
  }
  CHECK(ran + cancelled == 3);
}

TEST_CASE("The deadline timer runs callbacks in the order of their times, once each") {
  DeadlineTimer timer;
  std::mutex mutex;
  std::vector<int> order;
  std::promise<void> done;
  timer.after(60ms, [&] {
    std::lock_guard lock(mutex);
    order.push_back(2);
    done.set_value();
  });
  timer.after(10ms, [&] {
    std::lock_guard lock(mutex);
    order.push_back(1);
  });
  REQUIRE(done.get_future().wait_for(30s) == std::future_status::ready);
  std::lock_guard lock(mutex);
  CHECK(order == std::vector<int>{1, 2});
}

TEST_CASE("A claim is taken once: by the job or by its deadline") {
  Claim a;
  CHECK(a.start());
  CHECK_FALSE(a.expire());
  CHECK(a.started());
  Claim b;
  CHECK(b.expire());
  CHECK_FALSE(b.start());
}

TEST_CASE("A slow read is answered 503 naming the database while /health/live answers") {
  ServingWorld w;
  SerialWorker worker;
  RequestPool reads(1, 8);
  DeadlineTimer timer;
  auto handler = make_api_http_handler(
      *w.api, worker,
      {.reads = &reads, .timer = &timer, .read_timeout = 50ms, .database = "the db (x)"});
  auto slow = call(handler, request_of("GET", "/api/v1/slow"));
  auto queued = call(handler, request_of("GET", "/api/v1/slow"));
  // The pool's only thread waits; health is answered on the calling thread all the same.
  auto live = call(handler, request_of("GET", "/health/live"));
  REQUIRE(live.wait_for(1s) == std::future_status::ready);
  CHECK(live.get().status == 200);
  for (auto* answer : {&slow, &queued}) {
    REQUIRE(answer->wait_for(30s) == std::future_status::ready);
    const auto response = answer->get();
    CHECK(response.status == 503);
    CHECK(serving_error_of(response).find("the db (x) did not answer within 1 s") !=
          std::string::npos);
    CHECK(response.headers.count("Retry-After") == 1);
  }
  w.gate.open();
}

TEST_CASE("A mutation still waiting for the worker at its deadline is answered 503, never run") {
  ServingWorld w;
  SerialWorker worker;
  DeadlineTimer timer;
  auto handler = make_api_http_handler(*w.api, worker, {.timer = &timer, .mutation_wait = 50ms});
  auto running = call(handler, request_of("POST", "/api/v1/slow"));
  auto waiting = call(handler, request_of("POST", "/api/v1/slow"));
  REQUIRE(waiting.wait_for(30s) == std::future_status::ready);
  const auto refused = waiting.get();
  CHECK(refused.status == 503);
  CHECK(serving_error_of(refused).find("not done") != std::string::npos);
  CHECK(refused.headers.count("Retry-After") == 1);
  // The running one is never cut short: it answers with its own result once done.
  CHECK(running.wait_for(100ms) == std::future_status::timeout);
  w.gate.open();
  REQUIRE(running.wait_for(30s) == std::future_status::ready);
  CHECK(running.get().status == 200);
  std::promise<void> drained;
  REQUIRE(worker.post([&] { drained.set_value(); }));
  drained.get_future().wait_for(30s);
  CHECK(w.mutations == 1);
  CHECK(w.audit.statuses() == std::vector<int>{200, 503});  // both audited, as answered
}

TEST_CASE("Grouped mutations waiting for the worker together run in one call, each audited") {
  ServingWorld w;
  std::mutex mutex;
  std::vector<std::size_t> groups;  // the size of each call of the group handler
  w.api->routes().add(grouped_route([&](const std::vector<HttpServerRequest>& requests) {
    {
      std::lock_guard lock(mutex);
      groups.push_back(requests.size());
    }
    std::vector<HttpServerResponse> out;
    for (const auto& r : requests) {
      HttpServerResponse answer;
      answer.status = r.query.count("bad") ? 400 : 200;
      answer.body = r.target;
      out.push_back(answer);
    }
    return out;
  }));
  SerialWorker worker;
  DeadlineTimer timer;
  auto handler = make_api_http_handler(*w.api, worker, {.timer = &timer, .mutation_wait = 30s});
  auto blocking = call(handler, request_of("POST", "/api/v1/slow"));  // holds the worker
  std::vector<std::future<HttpServerResponse>> answers;
  for (const char* target : {"/api/v1/grouped?n=1", "/api/v1/grouped?n=2&bad=1",
                             "/api/v1/grouped?n=3", "/api/v1/nowhere"}) {
    answers.push_back(call(handler, request_of("POST", target)));
  }
  CHECK(answers[0].wait_for(100ms) == std::future_status::timeout);  // behind the slow one
  w.gate.open();
  std::vector<int> statuses;
  for (auto& answer : answers) {
    REQUIRE(answer.wait_for(30s) == std::future_status::ready);
    const HttpServerResponse r = answer.get();
    statuses.push_back(r.status);
    if (r.status != 404) CHECK(r.body.find("/api/v1/grouped?n=") == 0);
  }
  CHECK(statuses == std::vector<int>{200, 400, 200, 404});
  REQUIRE(blocking.wait_for(30s) == std::future_status::ready);
  {
    std::lock_guard lock(mutex);
    CHECK(groups == std::vector<std::size_t>{3});  // the three waited together: one call
  }
  // The slow one and each grouped request are audited with their own answer (the 404 has no
  // route: not audited).
  auto audited = w.audit.statuses();
  std::sort(audited.begin(), audited.end());
  CHECK(audited == std::vector<int>{200, 200, 200, 400});
}

TEST_CASE("Grouped mutations on a worker of their own never wait for a step or a mutation") {
  ServingWorld w;
  std::atomic<int> grouped_calls{0};
  w.api->routes().add(grouped_route([&](const std::vector<HttpServerRequest>& requests) {
    ++grouped_calls;
    return std::vector<HttpServerResponse>(requests.size());
  }));
  SerialWorker worker;
  SerialWorker announcements;
  DeadlineTimer timer;
  auto handler = make_api_http_handler(
      *w.api, worker, {.timer = &timer, .mutation_wait = 30s, .grouped = &announcements});
  auto blocking = call(handler, request_of("POST", "/api/v1/slow"));  // holds the worker
  // And the mutation lock: Api::step and every other mutation wait for it, a group does not.
  auto behind = call(handler, request_of("POST", "/api/v1/slow"));
  auto grouped = call(handler, request_of("POST", "/api/v1/grouped?n=1"));
  REQUIRE(grouped.wait_for(30s) == std::future_status::ready);
  CHECK(grouped.get().status == 200);
  CHECK(grouped_calls == 1);
  CHECK(behind.wait_for(0s) == std::future_status::timeout);  // still behind the slow one
  w.gate.open();
  REQUIRE(blocking.wait_for(30s) == std::future_status::ready);
  REQUIRE(behind.wait_for(30s) == std::future_status::ready);
  CHECK(w.mutations == 2);
}

namespace {

class FakeCluster final : public Cluster {
 public:
  std::string id = "me";
  bool leading = false;
  std::optional<ClusterLeaderInfo> holder;
  std::optional<std::string> secret;
  const std::string& node_id() const override { return id; }
  bool is_leader() const override { return leading; }
  std::optional<std::string> leader_url() const override { return std::nullopt; }
  std::optional<ClusterLeaderInfo> lease_holder() const override { return holder; }
  std::optional<std::string> forward_secret() const override { return secret; }
  Result<ClusterView> view() override { return fail("no view"); }
  Result<Time> step_down(std::chrono::seconds) override { return fail("no"); }
  Result<void> confirm() override { return {}; }
};

class RecordingClient final : public HttpClient {
 public:
  std::vector<HttpRequest> sent;
  Result<HttpResponse> send(const HttpRequest& request) override {
    sent.push_back(request);
    return HttpResponse{200, {{"Content-Type", "application/json"}}, "{}"};
  }
};

}  // namespace

namespace {
// A cluster handler in front of an inner handler that counts its calls.
struct Forwarding {
  ServingWorld w;
  FakeCluster cluster;
  std::shared_ptr<RecordingClient> client = std::make_shared<RecordingClient>();
  std::atomic<int> inner_calls{0};
  std::atomic<bool> peer_audited{false};
  AsyncHttpHandler handler = make_cluster_http_handler(
      [this](HttpServerRequest r, HttpResponder respond) {
        ++inner_calls;
        peer_audited = r.audited_by_peer;
        respond(HttpServerResponse{});
      },
      *w.api, cluster, client, {.retry_after_seconds = 3});

  auto post(std::map<std::string, std::string> headers = {}) {
    auto request = request_of("POST", "/api/v1/slow");
    request.headers = std::move(headers);
    return call(handler, std::move(request)).get();
  }
};
}  // namespace

TEST_CASE("Forwarding: never to itself, only with the cluster's secret, forged ones refused") {
  Forwarding f;
  SECTION("a lease that names this node: 503 at once, with Retry-After, nothing sent") {
    f.cluster.holder = ClusterLeaderInfo{"me", "http://me:1", 0, {}};
    f.cluster.secret = "s3cret";
    const auto answer = f.post();
    CHECK(answer.status == 503);
    CHECK(serving_error_of(answer).find("not forwarded to itself") != std::string::npos);
    CHECK(answer.headers.at("Retry-After") == "3");
    CHECK(f.client->sent.empty());
    CHECK(f.w.audit.statuses() == std::vector<int>{503});
  }
  SECTION("a standby forwards with its id and the secret") {
    f.cluster.holder = ClusterLeaderInfo{"boss", "http://boss:1", 0, {}};
    f.cluster.secret = "s3cret";
    CHECK(f.post().status == 200);
    REQUIRE(f.client->sent.size() == 1);
    CHECK(f.client->sent[0].url == "http://boss:1/api/v1/slow");
    const auto& h = f.client->sent[0].headers;
    CHECK(std::count(h.begin(), h.end(),
                     std::pair<std::string, std::string>{"X-Celos-Cluster-Secret", "s3cret"}) == 1);
    CHECK(std::count(h.begin(), h.end(),
                     std::pair<std::string, std::string>{"X-Celos-Forwarded", "me"}) == 1);
  }
  SECTION("without the secret yet a standby does not forward") {
    f.cluster.holder = ClusterLeaderInfo{"boss", "http://boss:1", 0, {}};
    CHECK(f.post().status == 503);
    CHECK(f.client->sent.empty());
  }
  SECTION("the leader takes a forward with the secret as audited by the peer") {
    f.cluster.leading = true;
    f.cluster.secret = "s3cret";
    CHECK(f.post({{"x-celos-forwarded", "peer"}, {"x-celos-cluster-secret", "s3cret"}}).status ==
          200);
    CHECK(f.inner_calls == 1);
    CHECK(f.peer_audited);
    SECTION("and refuses one without it, or with another, auditing the refusal") {
      for (const char* sent : {"", "s3creT", "s3cret2"}) {
        std::map<std::string, std::string> headers{{"x-celos-forwarded", "peer"}};
        if (*sent) headers["x-celos-cluster-secret"] = sent;
        const auto answer = f.post(headers);
        CHECK(answer.status == 403);
        CHECK(serving_error_of(answer).find("secret") != std::string::npos);
      }
      CHECK(f.inner_calls == 1);
      CHECK(f.w.audit.statuses() == std::vector<int>{403, 403, 403});
    }
  }
  SECTION("a cluster of one (no secret) refuses every forward") {
    f.cluster.leading = true;
    CHECK(f.post({{"x-celos-forwarded", "me"}, {"x-celos-cluster-secret", ""}}).status == 403);
    CHECK(f.inner_calls == 0);
  }
}
