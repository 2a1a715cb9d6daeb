// Rate limits per external service endpoint (issue 29, celos/service_limits.h): the tokens on
// explicit times, the share of one step's capacity, and the step's use of both: maxConcurrent
// over the RUNNING slots of an endpoint's workflows (also in a partial step), submitsPerSecond
// across steps, and live picks before backfill picks across workflows.
#include "celos/service_limits.h"

#include <catch2/catch.hpp>

#include "celos/executor.h"
#include "model/step.h"
#include "testing/scheduler_world.h"

using namespace celos;
using celos::testing::kStart;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;

namespace {

const std::string kEndpoint = "oozie http://oozie:11000/oozie";

// Hourly workflows on one fake service whose limit endpoint is kEndpoint, ten slots at a time,
// on the manual clock (the step's clock is its `now` only).
struct ServiceLimitsWorld : celos::testing::SchedulerWorld {
  ServiceLimitsWorld() {
    service->set_endpoint(kEndpoint);
    scheduler.set_clock(clock);
  }
  Workflow& add_wide(const std::string& id) {
    Workflow& w = add(id);
    w.strategy = make_serial_strategy(10);
    return w;
  }
  void limit(ServiceLimits limits) { config->service_limits[kEndpoint] = limits; }
  int count(const std::string& wf, SlotStatus status, int hours_from_start) {
    int n = 0;
    for (int h = 0; h < hours_from_start; ++h) n += this->status(wf, kStart + hours(h)) == status;
    return n;
  }
};

int deferred(const StepReport& report, ServiceLimit limit) {
  auto it = report.limit_deferred.find({kEndpoint, limit});
  return it == report.limit_deferred.end() ? 0 : it->second;
}

}  // namespace

TEST_CASE("submitsPerSecond: floor(r) tokens, each back one second after it was spent") {
  ServiceLimiter limiter;
  const Time t = kStart;
  CHECK(limiter.reserve("e", 2.5, 5, t) == 2);
  limiter.spend("e", t);
  limiter.spend("e", t + milliseconds(300));
  CHECK(limiter.reserve("e", 2.5, 5, t + milliseconds(999)) == 0);
  CHECK(limiter.reserve("e", 2.5, 5, t + milliseconds(1000)) == 1);  // the first is back
  limiter.release("e", 1);                                           // not used after all
  CHECK(limiter.reserve("e", 2.5, 5, t + milliseconds(1300)) == 2);
  CHECK(limiter.reserve("other", 2, 5, t) == 2);  // each endpoint has its own tokens

  // Below one a second: one token, back after 1/r seconds.
  CHECK(limiter.reserve("slow", 0.5, 3, t) == 1);
  limiter.spend("slow", t);
  CHECK(limiter.reserve("slow", 0.5, 3, t + milliseconds(1999)) == 0);
  CHECK(limiter.reserve("slow", 0.5, 3, t + milliseconds(2000)) == 1);
  CHECK(token_rule(7).tokens == 7);
  CHECK(token_rule(0.25).period == milliseconds(4000));
}

TEST_CASE("an endpoint's capacity goes to every workflow's live picks before any backfill pick") {
  // (live, backfill) picks per workflow.
  CHECK(share_capacity({{2, 3}, {0, 4}, {1, 0}}, 4) == std::vector<std::size_t>{3, 0, 1});
  CHECK(share_capacity({{2, 3}, {0, 4}, {1, 0}}, 5) == std::vector<std::size_t>{3, 1, 1});
  CHECK(share_capacity({{3, 0}, {3, 0}}, 3) == std::vector<std::size_t>{2, 1});  // round robin
  CHECK(share_capacity({{1, 1}}, 10) == std::vector<std::size_t>{2});
  CHECK(share_capacity({{1, 1}}, 0) == std::vector<std::size_t>{0});
}

TEST_CASE("maxConcurrent counts the RUNNING slots of all the endpoint's workflows") {
  ServiceLimitsWorld w;
  w.add_wide("a");
  w.add_wide("b");
  w.limit({.submits_per_second = std::nullopt, .max_concurrent = 3});
  w.store("a", kStart, SlotStatus::kRunning, "job-x");
  const Time now = kStart + hours(4) + minutes(10);
  w.scheduler.step(now);  // WAITING -> READY: a has 4, b 5
  auto report = w.scheduler.step(now);
  CHECK(w.service->submitted.size() == 2);  // 3 minus the one RUNNING
  CHECK(w.count("a", SlotStatus::kRunning, 5) == 2);
  CHECK(w.count("b", SlotStatus::kRunning, 5) == 1);
  CHECK(deferred(report, ServiceLimit::kMaxConcurrent) == 7);
  CHECK(w.count("a", SlotStatus::kReady, 5) + w.count("b", SlotStatus::kReady, 5) == 7);
  report = w.scheduler.step(now);
  CHECK(w.service->submitted.size() == 2);  // still 3 RUNNING
  CHECK(deferred(report, ServiceLimit::kMaxConcurrent) == 7);

  // A partial step of b alone counts a's RUNNING slots as the last step saw them.
  w.scheduler.step(now, std::set<std::string>{"b"}, "test");
  CHECK(w.service->submitted.size() == 2);
  for (auto& [job, status] : w.service->statuses) status = ExternalStatus::kSuccess;
  w.service->set_status("job-x", ExternalStatus::kSuccess);
  w.scheduler.step(now);  // all three end (after this step's submissions)
  w.scheduler.step(now, std::set<std::string>{"b"}, "test");
  CHECK(w.service->submitted.size() == 5);  // b takes the three places
  CHECK(w.count("b", SlotStatus::kRunning, 5) == 3);
}

TEST_CASE("a partial step before any full step submits nothing to a maxConcurrent endpoint") {
  ServiceLimitsWorld w;
  w.add_wide("a");
  w.add_wide("b");  // not stepped: its RUNNING slots are unknown
  w.limit({.submits_per_second = std::nullopt, .max_concurrent = 3});
  const Time now = kStart + minutes(10);
  w.scheduler.step(now, std::set<std::string>{"a"}, "test");  // READY
  auto report = w.scheduler.step(now, std::set<std::string>{"a"}, "test");
  CHECK(w.service->submitted.empty());
  CHECK(deferred(report, ServiceLimit::kMaxConcurrent) == 1);
  w.scheduler.step(now);  // b's slot becomes READY
  CHECK(w.service->submitted.size() == 1);
}

TEST_CASE("submitsPerSecond holds submissions back across steps on the step's clock") {
  ServiceLimitsWorld w;
  w.add_wide("a");
  w.add_wide("b");
  w.limit({.submits_per_second = 2, .max_concurrent = std::nullopt});
  const Time now = kStart + hours(2) + minutes(10);
  w.scheduler.step(now);  // 6 READY
  auto report = w.scheduler.step(now);
  CHECK(w.service->submitted.size() == 2);
  CHECK(deferred(report, ServiceLimit::kSubmitsPerSecond) == 4);
  CHECK(w.count("a", SlotStatus::kRunning, 3) == 1);  // one each, round robin
  w.scheduler.step(now + milliseconds(999));
  CHECK(w.service->submitted.size() == 2);
  w.scheduler.step(now + milliseconds(1000));
  CHECK(w.service->submitted.size() == 4);
  // A partial step shares the tokens.
  w.scheduler.step(now + milliseconds(1500), std::set<std::string>{"a"}, "test");
  CHECK(w.service->submitted.size() == 4);
  w.scheduler.step(now + milliseconds(2000), std::set<std::string>{"a"}, "test");
  CHECK(w.service->submitted.size() == 5);  // a had one READY slot left
  CHECK(w.count("a", SlotStatus::kRunning, 3) == 3);
}

TEST_CASE("limits apply only to the endpoint named, and not without a declaration") {
  ServiceLimitsWorld w;
  w.add_wide("a");
  w.config->service_limits["oozie http://elsewhere:11000/oozie"] = {.submits_per_second = 1,
                                                                    .max_concurrent = 1};
  const Time now = kStart + hours(2) + minutes(10);
  w.scheduler.step(now);
  w.scheduler.step(now);
  CHECK(w.service->submitted.size() == 3);
}

TEST_CASE("live picks of one workflow go before backfill picks of another on one endpoint") {
  ServiceLimitsWorld w;
  w.add("a");
  w.add("b");
  w.limit({.submits_per_second = std::nullopt, .max_concurrent = 1});
  SlotState backfill = SlotState::of({"a", kStart}, SlotStatus::kReady);
  backfill.backfill = "plan-1";
  REQUIRE(w.db->put_slots({backfill, SlotState::of({"b", kStart}, SlotStatus::kReady)}));
  auto executor = make_inline_executor();
  ServiceLimiter limiter;
  const auto step = [&] {
    return detail::run_step(*w.config, kStart + minutes(10), std::nullopt,
                            {*w.db,
                             w.resolver,
                             *executor,
                             w.clock,
                             {},
                             false,
                             nullptr,
                             std::set<std::string>{"plan-1"},
                             nullptr,
                             nullptr,
                             &limiter});
  };
  auto report = step();
  REQUIRE(w.service->submitted.size() == 1);
  CHECK(w.service->submitted[0] == SlotId{"b", kStart});
  CHECK(deferred(report, ServiceLimit::kMaxConcurrent) == 1);
  CHECK(w.status("a", kStart) == SlotStatus::kReady);
  w.service->set_status(*w.state("b", kStart).external_id, ExternalStatus::kSuccess);
  step();  // b ends after this step's submissions
  step();
  CHECK(w.service->submitted.size() == 2);
  CHECK(w.status("a", kStart) == SlotStatus::kRunning);
}
