// The operator endpoints through celos::Api: range rerun/kill, slot history, slot log.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "celos/api.h"
#include "celos/slot_history.h"
#include "celos/state_db.h"
#include "testing/api_world.h"

namespace {

namespace json = boost::json;
using namespace celos;
using celos::testing::WorldOptions;

const Time kOperatorApiNow = make_time(2015, 9, 13, 13, 30);

struct OperatorApiWorld : celos::testing::ApiWorld {
  OperatorApiWorld()
      : ApiWorld({.db = WorldOptions::Db::kLocalDisk, .history = true, .now = kOperatorApiNow}) {
    remote = "10.0.0.7:41234";
    add("wf").start_time = make_time(2015, 9, 13, 10);
    serve({.clock = clock_function(), .jobs_dir = *dir / "db/jobs"});
  }

  void store(const std::string& time, SlotStatus s, std::optional<std::string> job = {}) {
    ApiWorld::store("wf", *parse_time(time), s, std::move(job));
  }
};

}  // namespace

TEST_CASE("POST /api/v1/rerun with start and end answers the range, dry run or real") {
  OperatorApiWorld w;
  w.store("2015-09-13T10:00Z", SlotStatus::kFailure);
  w.store("2015-09-13T11:00Z", SlotStatus::kRunning, "job-1");
  const std::string range = "/api/v1/rerun?id=wf&start=2015-09-13T09:00Z&end=2015-09-13T13:00Z";
  auto dry = w.call_json("POST", range + "&dryRun=true");
  CHECK(
      json::serialize(dry) ==
      R"({"dryRun":true,"slots":[{"time":"2015-09-13T10:00:00.000Z","from":"FAILURE","to":"WAITING"},)"
      R"({"time":"2015-09-13T12:00:00.000Z","from":null,"to":"WAITING"}],)"
      R"("skipped":[{"time":"2015-09-13T11:00:00.000Z","status":"RUNNING",)"
      R"("reason":"cannot rerun slot wf@2015-09-13T11:00:00.000Z: it is RUNNING"}]})");
  CHECK(w.db->get_slot({"wf", make_time(2015, 9, 13, 10)}).value()->status == SlotStatus::kFailure);
  auto real = w.call_json("POST", range + "&status=FAILURE");
  CHECK(real.at("dryRun") == false);
  CHECK(real.at("slots").as_array().size() == 1);
  CHECK(w.db->get_slot({"wf", make_time(2015, 9, 13, 10)}).value()->status == SlotStatus::kWaiting);
  auto history = w.call_json("GET", "/api/v1/slot-history?id=wf&time=2015-09-13T10:00Z");
  CHECK(json::serialize(history) ==
        R"([{"at":"2015-09-13T13:30:00.000Z","from":"FAILURE","to":"WAITING","externalID":null,)"
        R"("retryCount":0,"by":"api:anonymous@10.0.0.7"}])");
}

TEST_CASE("range requests with bad parameters are 400 and change nothing") {
  OperatorApiWorld w;
  w.store("2015-09-13T10:00Z", SlotStatus::kFailure);
  const std::string base = "/api/v1/rerun?id=wf";
  w.call_json("POST", base + "&time=2015-09-13T10:00Z&start=2015-09-13T09:00Z", 400);
  w.call_json("POST", base + "&start=2015-09-13T09:00Z", 400);
  w.call_json("POST", base + "&end=2015-09-13T09:00Z", 400);
  w.call_json("POST", base + "&start=2015-09-13T12:00Z&end=2015-09-13T09:00Z", 400);
  w.call_json("POST", base + "&start=2015-09-13T09:00Z&end=2015-09-14T09:00Z&status=BROKEN", 400);
  w.call_json("POST", base + "&start=2015-09-13T09:00Z&end=2015-09-14T09:00Z&dryRun=yes", 400);
  w.call_json("POST", base + "&start=2015-09-13T09:00Z&end=2017-09-14T09:00Z", 400);
  w.call_json("POST", "/api/v1/kill?id=nope&start=2015-09-13T09:00Z&end=2015-09-14T09:00Z", 404);
  CHECK(w.db->get_slot({"wf", make_time(2015, 9, 13, 10)}).value()->status == SlotStatus::kFailure);
  CHECK(w.call_json("GET", "/api/v1/slot-history?id=wf&time=2015-09-13T10:00Z").as_array().empty());
  w.call_json("GET", "/api/v1/slot-history?id=wf&time=2015-09-13T10:30Z", 404);
}

TEST_CASE("with time and no dryRun /api/v1/rerun answers as /rerun, with dryRun as a range") {
  OperatorApiWorld w;
  w.store("2015-09-13T10:00Z", SlotStatus::kFailure);
  auto dry = w.call_json("POST", "/api/v1/kill?id=wf&time=2015-09-13T11:00Z&dryRun=true");
  CHECK(dry.at("slots").as_array().size() == 1);
  w.call_json("POST", "/api/v1/kill?id=wf&time=2015-09-13T11:30Z&dryRun=true", 404);
  auto single = w.call_json("POST", "/api/v1/rerun?id=wf&time=2015-09-13T10:00Z");
  CHECK(single.at("status") == "WAITING");
  CHECK(single.as_object().contains("retryCount"));
}

TEST_CASE("GET /api/v1/slot-log answers the tail of the job's output as text") {
  OperatorApiWorld w;
  w.store("2015-09-13T10:00Z", SlotStatus::kSuccess, "job-1");
  testing::write_text_file(*w.dir / "db/jobs/wf/2015-09-13/10:00:00.000Z/job-1/stdout", "hello\n");
  testing::write_text_file(*w.dir / "db/jobs/wf/2015-09-13/10:00:00.000Z/job-1/stderr", "warn\n");
  // The fake service keeps no output and cannot fetch a log from its engine: 404, saying so.
  const std::string slot = "/api/v1/slot-log?id=wf&time=2015-09-13T10:00Z";
  auto refused = w.call("GET", slot);
  CHECK(refused.status == 404);
  CHECK(refused.body.find("not kept by celos") != std::string::npos);
  w.service->service_traits.keeps_job_output = true;
  auto out = w.call("GET", slot);
  CHECK(out.status == 200);
  CHECK(out.content_type == "text/plain; charset=utf-8");
  CHECK(out.body == "hello\n");
  CHECK(w.call("GET", slot + "&stream=stderr&tail=2").body == "n\n");
  CHECK(w.call("GET", slot + "&stream=nope").status == 400);
  CHECK(w.call("GET", slot + "&tail=0").status == 400);
  CHECK(w.call("GET", slot + "&tail=16777217").status == 400);
  CHECK(w.call("GET", slot + "&tail=abc").status == 400);
  CHECK(w.call("GET", "/api/v1/slot-log?id=wf&time=2015-09-13T11:00Z").status == 404);
}

namespace {
// A service whose engine keeps the job's output (a pod's log): slot-log asks it, with the tail.
class EngineLogService final : public testing::FakeExternalService {
 public:
  Result<std::string> job_log(const SlotId& slot, const std::string& external_id,
                              std::string_view stream, std::size_t tail) override {
    if (stream == "stderr") return fail("engine down", ErrorCode::kUnavailable);
    return fmt::format("{} {} {} {}", to_string(slot), external_id, stream, tail);
  }
};
}  // namespace

TEST_CASE("slot-log asks a service that keeps no output in celos for its engine's log") {
  OperatorApiWorld w;
  w.add(w.workflow("pod", std::make_shared<EngineLogService>()));
  w.ApiWorld::store("pod", make_time(2015, 9, 13, 10), SlotStatus::kRunning, "ns/job-1");
  const std::string slot = "/api/v1/slot-log?id=pod&time=2015-09-13T10:00Z";
  auto out = w.call("GET", slot + "&tail=7");
  CHECK(out.status == 200);
  CHECK(out.body == "pod@2015-09-13T10:00:00.000Z ns/job-1 stdout 7");
  CHECK(w.call("GET", slot + "&stream=stderr").status == 502);  // the engine failed
}
