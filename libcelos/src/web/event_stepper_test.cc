// Issue 28: event-driven partial steps, over the scheduler world with the Api in front of it.
#include "celos/event_stepper.h"

#include <atomic>
#include <future>
#include <thread>

#include <catch2/catch.hpp>

#include "celos/dataset.h"
#include "testing/api_world.h"

namespace {

using namespace celos;
using namespace std::chrono_literals;
using celos::testing::kStart;

// A world whose Api reports its events to an EventStepper on a SerialWorker, as celos-server
// wires them with --autoSchedule.
struct EventStepperWorld : celos::testing::ApiWorld {
  SerialWorker worker;
  Metrics metrics;
  std::unique_ptr<EventStepper> events;

  EventStepperWorld() : ApiWorld(celos::testing::WorldOptions{.now = kStart + 3h}) {}
  ~EventStepperWorld() override { worker.stop(); }

  void start(std::chrono::milliseconds settle = 0ms, std::chrono::milliseconds max_delay = 500ms) {
    link_datasets(*config, {{Dataset{"clicks", "/data/${year}${month}${day}${hour}", "", "_DONE"},
                             "d.js", 1}});
    REQUIRE(config->errors.empty());
    serve({.clock = clock_function(),
           .metrics = &metrics,
           .on_event = [this](EventSource s, const std::vector<std::string>& ids) {
             events->post(s, ids);
           }});
    events = std::make_unique<EventStepper>(
        *api, worker,
        EventStepperOptions{.config = [this] { return scheduler.config(); },
                            .metrics = &metrics,
                            .clock = &clock,
                            .settle = settle,
                            .max_delay = max_delay});
    scheduler.add_listener(*events);
  }

  // Blocks the worker until the returned promise is set (bounded).
  std::shared_ptr<std::promise<void>> hold_worker() {
    auto gate = std::make_shared<std::promise<void>>();
    auto future = gate->get_future().share();
    REQUIRE(worker.post([future] { future.wait_for(30s); }));
    return gate;
  }

  // Waits (bounded) until the worker ran everything queued before this call.
  void drain() {
    std::promise<void> drained;
    REQUIRE(worker.post([&] { drained.set_value(); }));
    REQUIRE(drained.get_future().wait_for(30s) == std::future_status::ready);
  }

  // Drains until no partial step is queued any more (chains queue the next one).
  void settle() {
    int before = -1;
    for (int i = 0; i < 50 && events->partial_steps() != before; ++i) {
      before = events->partial_steps();
      drain();
    }
  }

  // Polls (bounded, real time) until `n` partial steps ran; the timer queues them.
  bool partial_steps_reach(int n) {
    for (int i = 0; i < 2000; ++i) {
      drain();
      if (events->partial_steps() >= n) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }

  // What the stepper did by now, once the timer and the worker had their chance.
  int partial_steps_now() {
    std::this_thread::sleep_for(20ms);
    drain();
    return events->partial_steps();
  }

  bool submitted(const std::string& wf, Time t) const {
    for (const SlotId& s : service->submitted) {
      if (s.workflow == wf && s.time == t) return true;
    }
    return false;
  }
};

}  // namespace

TEST_CASE("A burst of announcements is one partial step of exactly the dataset's consumers") {
  EventStepperWorld w;
  w.add("reader").inputs = {{"clicks"}};
  w.add("other-reader").inputs = {{"clicks"}};
  w.add("bystander");
  w.start();
  auto gate = w.hold_worker();
  for (int h = 0; h < 3; ++h) {
    const std::string t = format_time(kStart + std::chrono::hours(h));
    w.call_json("POST", "/api/v1/datasets/clicks/instances?time=" + t);
  }
  gate->set_value();
  w.drain();
  // The three events made one partial step (slots READY); the READY slots woke their workflows
  // again, which submitted them.
  w.settle();
  CHECK(w.submitted("reader", kStart));
  CHECK(w.submitted("other-reader", kStart));
  CHECK_FALSE(w.submitted("bystander", kStart));
  CHECK(w.events->partial_steps() == 2);
  CHECK_THAT(w.metrics.render(nullptr),
             Catch::Contains("celos_event_to_submit_seconds_count{event=\"announcement\"} 2"));
}

TEST_CASE("A producer's success steps the workflows whose triggers read its slots") {
  EventStepperWorld w;
  w.add("producer");
  w.add("follower", make_success_trigger("producer"));
  w.add("watcher", make_status_trigger("producer", {"FAILURE"}));
  w.add("bystander", make_success_trigger("follower"));
  w.start();
  w.store("producer", kStart, SlotStatus::kRunning, "job-1");
  w.service->set_status("job-1", ExternalStatus(JobState::kSuccess));
  // The producer's job ended: its own workflow is stepped (what a job event does).
  w.events->post(EventSource::kJob, {"producer"});
  w.settle();
  CHECK(w.status("producer", kStart) == SlotStatus::kSuccess);
  CHECK(w.submitted("follower", kStart));
  CHECK_FALSE(w.submitted("bystander", kStart));  // follower's slot is only RUNNING
  // The chain is measured from the job's end.
  CHECK_THAT(w.metrics.render(nullptr),
             Catch::Contains("celos_event_to_submit_seconds_count{event=\"job\"} "));
}

TEST_CASE("A rerun steps that workflow at once, a stopped stepper steps nothing") {
  EventStepperWorld w;
  w.add("wf");
  w.start();
  w.store("wf", kStart, SlotStatus::kSuccess, "job-1");
  w.call_json("POST", "/api/v1/rerun?id=wf&time=" + format_time(kStart));
  w.settle();
  CHECK(w.submitted("wf", kStart));
  const int steps = w.events->partial_steps();
  w.events->stop();
  w.events->post(EventSource::kOperator, {"wf"});
  w.drain();
  CHECK(w.events->partial_steps() == steps);
}

TEST_CASE("An announcement steps its consumers at once, whatever their back-off") {
  EventStepperWorld w;
  w.data_fs->set_prefers_listing(true);  // each check a round trip, as on WebHDFS
  w.scheduler.set_data_check_backoff({.step = 60s, .max = 10min});
  w.add("reader").inputs = {{"clicks"}};
  w.start();
  const Time t0 = kStart + 3h;  // slots 00:00 to 02:00 wait for their data
  // Through the Api: its steps are serialized with the partial steps the stepper runs on the
  // worker meanwhile (Scheduler::step called directly raced with them under ThreadSanitizer).
  for (int k = 0; k < 3; ++k) w.api->step(t0 + k * 1min);
  w.clock.set_wall(t0 + 2min);
  w.call_json("POST", "/api/v1/datasets/clicks/instances?time=" + format_time(kStart));
  w.settle();
  CHECK(w.submitted("reader", kStart));
}

TEST_CASE("With a settle time a burst is stepped once it paused, or at its max delay") {
  EventStepperWorld w;
  w.add("a");
  w.add("b");
  w.start(10ms, 100ms);
  w.events->post(EventSource::kOperator, {"a"});
  w.clock.advance(6ms);
  w.events->post(EventSource::kOperator, {"b"});
  w.clock.advance(6ms);  // 12 ms after the first event, 6 after the last: not quiet yet
  CHECK(w.partial_steps_now() == 0);
  w.clock.advance(4ms);  // 10 ms without an event
  REQUIRE(w.partial_steps_reach(1));
  // The slots it made READY wake their workflows again, which submits them 10 ms later.
  w.clock.advance(10ms);
  REQUIRE(w.partial_steps_reach(2));
  CHECK(w.submitted("a", kStart));
  CHECK(w.submitted("b", kStart));

  // Events every 6 ms never leave 10 ms of quiet: the step comes at the first one's max delay.
  const int before = w.partial_steps_now();
  for (int k = 0; k < 16; ++k) {  // 0 to 90 ms after the first
    w.events->post(EventSource::kOperator, {"a"});
    w.clock.advance(6ms);
  }
  CHECK(w.partial_steps_now() == before);  // 96 ms after the first event
  w.clock.advance(4ms);
  CHECK(w.partial_steps_reach(before + 1));
}

TEST_CASE("A partial step follows a long one as soon as its events settled") {
  // Announcements no longer share the worker with the steps (Route::group_handler), so nothing
  // is gained by holding the next partial step back: its events wait only to settle.
  EventStepperWorld w;
  w.add("a");
  w.add("b");
  w.start(10ms, 100ms);
  std::atomic<bool> slow{true};
  w.service->on_start = [&](const SlotId&, const std::string&) {
    if (slow.exchange(false)) w.clock.advance(200ms);  // the step's first start takes 200 ms
  };
  w.events->post(EventSource::kOperator, {"a"});
  w.clock.advance(10ms);
  REQUIRE(w.partial_steps_reach(1));  // a's slots READY; that wakes a again
  w.clock.advance(10ms);
  REQUIRE(w.partial_steps_reach(2));  // submitted: this step took 200 ms
  REQUIRE(w.submitted("a", kStart));
  w.events->post(EventSource::kOperator, {"b"});
  w.clock.advance(10ms);  // settled, 10 ms after that step
  CHECK(w.partial_steps_reach(3));
  w.clock.advance(10ms);
  CHECK(w.partial_steps_reach(4));
  CHECK(w.submitted("b", kStart));
}
