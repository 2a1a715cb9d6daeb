// Notifications: which changes notify whom, the payload, retries with back-off at explicit
// times, giving up, and the bounded queue.
#include "celos/notifier.h"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "testing/fakes.h"

using namespace celos;
using celos::testing::FakeHttpClient;
using std::chrono::minutes;
using std::chrono::seconds;

namespace {

const Time kT = make_time(2015, 9, 13, 1);

struct NotifierWorld {
  std::shared_ptr<FakeHttpClient> http = std::make_shared<FakeHttpClient>();
  WorkflowConfig config;
  int failures_left = 0;

  NotifierWorld() {
    Workflow w;
    w.id = "wf";
    w.url = "http://wiki/wf";
    w.notify = {{{SlotStatus::kSuccess, SlotStatus::kFailure}, "http://hooks/wf"}};
    config.workflows["wf"] = w;
    Workflow other;
    other.id = "other";
    config.workflows["other"] = other;
    http->on([this](const HttpRequest&) -> std::optional<Result<HttpResponse>> {
      if (failures_left > 0) {
        --failures_left;
        return Result<HttpResponse>(fail("connection refused"));
      }
      return Result<HttpResponse>(HttpResponse{204, {}, ""});
    });
  }

  NotifierOptions options() {
    NotifierOptions o;
    o.http = http;
    o.default_webhooks = {"http://hooks/all"};
    o.node = "node-1";
    o.first_retry = seconds(5);
    o.max_retry = minutes(2);
    o.give_up_after = minutes(15);
    return o;
  }

  static SlotChange change(const std::string& wf, SlotStatus from, SlotStatus to) {
    SlotState state = SlotState::of({wf, kT}, to, "job-1");
    return SlotChange{SlotState::of({wf, kT}, from, "job-1"), state, kT, "step"};
  }
};

}  // namespace

TEST_CASE("a change into a listed status notifies the workflow's and the default webhooks") {
  NotifierWorld w;
  NotificationQueue queue(w.options());
  queue.add(NotifierWorld::change("wf", SlotStatus::kRunning, SlotStatus::kFailure), w.config);
  queue.add(NotifierWorld::change("wf", SlotStatus::kRunning, SlotStatus::kSuccess), w.config);
  queue.add(NotifierWorld::change("other", SlotStatus::kRunning, SlotStatus::kSuccess), w.config);
  queue.add(NotifierWorld::change("other", SlotStatus::kWaiting, SlotStatus::kWaitTimeout),
            w.config);
  CHECK(queue.size() == 4);  // wf FAILURE x2 webhooks, wf SUCCESS, other WAIT_TIMEOUT
  CHECK(queue.send_due(kT) == std::nullopt);
  REQUIRE(w.http->requests.size() == 4);
  const HttpRequest& first = w.http->requests[0];
  CHECK(first.method == "POST");
  CHECK(first.url == "http://hooks/all");
  auto body = boost::json::parse(first.body).as_object();
  CHECK(body.at("workflow") == "wf");
  CHECK(body.at("time") == "2015-09-13T01:00:00.000Z");
  CHECK(body.at("status") == "FAILURE");
  CHECK(body.at("externalID") == "job-1");
  CHECK(body.at("url") == "http://wiki/wf");
  CHECK(body.at("node") == "node-1");
  CHECK(body.at("id") != boost::json::parse(w.http->requests[1].body).at("id"));
  auto last = boost::json::parse(w.http->requests[3].body).as_object();
  CHECK(last.at("url").is_null());
  CHECK(queue.delivered() == 4);
}

TEST_CASE("a failed notification is retried with growing delays, then given up") {
  NotifierWorld w;
  NotificationQueue queue(w.options());
  w.failures_left = 2;
  queue.add(NotifierWorld::change("other", SlotStatus::kRunning, SlotStatus::kFailure), w.config);
  CHECK(queue.send_due(kT) == kT + seconds(5));
  CHECK(queue.send_due(kT + seconds(4)) == kT + seconds(5));  // not due: nothing sent
  CHECK(w.http->requests.size() == 1);
  CHECK(queue.send_due(kT + seconds(5)) == kT + seconds(15));
  CHECK(queue.send_due(kT + seconds(15)) == std::nullopt);
  CHECK(w.http->requests.size() == 3);
  CHECK(queue.delivered() == 1);

  w.failures_left = 1000;
  queue.add(NotifierWorld::change("other", SlotStatus::kRunning, SlotStatus::kFailure), w.config);
  Time now = kT;
  while (auto next = queue.send_due(now)) now = *next;
  CHECK(queue.undeliverable() == 1);
  CHECK(now - kT >= minutes(10));  // retried for at least ten minutes
  CHECK(now - kT <= minutes(15));
}

TEST_CASE("a full queue drops its oldest notification and counts it") {
  NotifierWorld w;
  auto options = w.options();
  options.capacity = 2;
  int reported = 0;
  options.on_drop = [&reported] { ++reported; };
  NotificationQueue queue(options);
  for (int i = 0; i < 3; ++i) {
    queue.add(NotifierWorld::change("other", SlotStatus::kRunning, SlotStatus::kFailure), w.config);
  }
  CHECK(queue.size() == 2);
  CHECK(queue.dropped() == 1);
  CHECK(reported == 1);  // what celos_notifications_dropped_total counts
}

TEST_CASE("a refused webhook is not called, not retried, and counted") {
  NotifierWorld w;
  auto options = w.options();
  int reported = 0;
  options.refuse = [](const std::string& url) -> std::optional<std::string> {
    if (url == "http://hooks/all") return std::string("hooks is a loopback address");
    return std::nullopt;
  };
  options.on_refused = [&reported] { ++reported; };
  NotificationQueue queue(options);
  queue.add(NotifierWorld::change("wf", SlotStatus::kRunning, SlotStatus::kFailure), w.config);
  CHECK(queue.send_due(kT) == std::nullopt);  // nothing left to retry
  REQUIRE(w.http->requests.size() == 1);
  CHECK(w.http->requests[0].url == "http://hooks/wf");
  CHECK(queue.refused() == 1);
  CHECK(reported == 1);
  CHECK(queue.delivered() == 1);
}

TEST_CASE("the notifier delivers from its own thread") {
  NotifierWorld w;
  auto config = std::make_shared<WorkflowConfig>(w.config);
  Notifier notifier([config] { return config; }, w.options());
  notifier.on_slot_changes(
      {NotifierWorld::change("wf", SlotStatus::kRunning, SlotStatus::kSuccess)});
  for (int i = 0; i < 500 && notifier.queue().delivered() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(notifier.queue().delivered() == 1);
  notifier.stop();
}
