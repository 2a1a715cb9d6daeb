// OpenLineage: which slot changes emit which RunEvents, what they say, the spool across crashes
// (a "fail at write n" loop) and a full spool, and the sender's retries, as stories over fakes.
#include "celos/lineage.h"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "celos/backfill.h"
#include "celos/file_system_wrapper.h"
#include "celos/state_db_open.h"
#include "testing/scheduler_world.h"

using namespace celos;
using celos::testing::FakeHttpClient;
using celos::testing::kStart;
using celos::testing::MemFileSystem;
using std::chrono::hours;
using std::chrono::minutes;
namespace json = boost::json;

namespace {

const Time kLineageNow = kStart + minutes(1);  // one slot: 00:00

LineageOptions options() {
  LineageOptions o;
  o.job_namespace = "prod";
  o.host = "box";
  return o;
}

// The scheduler world with the spool on its database's file system, under /db/lineage.
struct LineageWorld : celos::testing::SchedulerWorld {
  std::unique_ptr<LineageSpool> spool;

  explicit LineageWorld(std::size_t capacity = 1000) {
    Workflow wf = workflow("wc");
    wf.max_retry_count = 1;
    wf.inputs = {{"raw"}};
    wf.outputs = {{"counts"}};
    add(std::move(wf));
    config->datasets["raw"] = Dataset{"raw", "/raw/${year}${month}${day}/${hour}", "", "_SUCCESS"};
    config->datasets["counts"] =
        Dataset{"counts", "/counts/${hour}", "hdfs://nameservice1", "_SUCCESS"};
    open(capacity);
  }

  // Opens the spool again, as a restarted server does.
  void open(std::size_t capacity = 1000) {
    spool.reset();
    auto opened = LineageSpool::open(
        {db_fs, "/db/lineage", capacity, {}}, *db, [this] { return WorkflowConfigPtr(config); },
        options());
    REQUIRE(opened);
    spool = std::move(*opened);
    scheduler.set_outbox(*spool);
  }

  // Spools the START of `n` hourly slots' runs (00:00, 01:00, ...), each as its own write.
  void start_runs(int n) {
    for (int i = 0; i < n; ++i) {
      SlotState ready = SlotState::of({"wc", kStart + hours(i)}, SlotStatus::kReady);
      SlotState running = ready.running("job").value();
      running.run_id = new_run_id(kLineageNow);
      auto ticket = spool->prepare({SlotChange{ready, running, kLineageNow, "step"}});
      REQUIRE(ticket);
      spool->settle(*ticket, true);
    }
  }

  std::vector<json::object> events() const {
    std::vector<json::object> out;
    for (const SpoolEntry& e : spool->pending(1000))
      out.push_back(json::parse(e.event.json).as_object());
    return out;
  }
};

std::string str(const json::value& v) { return std::string(v.as_string()); }
std::string type_of(const json::object& e) { return str(e.at("eventType")); }
std::string run_of(const json::object& e) { return str(e.at("run").at("runId")); }

}  // namespace

TEST_CASE("an attempt is one run: START when it is recorded RUNNING, COMPLETE when it succeeds",
          "[lineage]") {
  LineageWorld w;
  w.scheduler.step(kLineageNow);  // READY
  w.scheduler.step(kLineageNow);  // RUNNING
  const SlotState running = w.state("wc", kStart);
  REQUIRE(running.status == SlotStatus::kRunning);
  REQUIRE(running.run_id);
  auto events = w.events();
  REQUIRE(events.size() == 1);
  const json::object& start = events[0];
  CHECK(type_of(start) == "START");
  CHECK(run_of(start) == *running.run_id);
  CHECK(str(start.at("eventTime")) == format_time(kLineageNow));
  CHECK(str(start.at("job").at("namespace")) == "prod");
  CHECK(str(start.at("job").at("name")) == "wc");
  const json::value& nominal = start.at("run").at("facets").at("nominalTime");
  CHECK(str(nominal.at("nominalStartTime")) == format_time(kStart));
  CHECK(str(nominal.at("nominalEndTime")) == format_time(kStart + hours(1)));
  CHECK(str(start.at("inputs").at(0).at("namespace")) == "file://box");
  CHECK(str(start.at("inputs").at(0).at("name")) == "/raw/20150913/00");
  CHECK(str(start.at("outputs").at(0).at("namespace")) == "hdfs://nameservice1");
  CHECK(str(start.at("outputs").at(0).at("name")) == "/counts/00");
  CHECK_FALSE(start.at("run").at("facets").as_object().contains("parent"));  // a live slot

  w.service->set_status(*running.external_id, JobState::kSuccess);
  w.scheduler.step(kLineageNow);
  CHECK_FALSE(w.state("wc", kStart).run_id);  // the attempt is over
  events = w.events();
  REQUIRE(events.size() == 2);
  CHECK(type_of(events[1]) == "COMPLETE");
  CHECK(run_of(events[1]) == *running.run_id);
  CHECK_FALSE(events[1].at("run").at("facets").as_object().contains("errorMessage"));
}

TEST_CASE("a retry is a new run: FAIL with an errorMessage, then START with a run id of its own",
          "[lineage]") {
  LineageWorld w;
  w.scheduler.step(kLineageNow);
  w.scheduler.step(kLineageNow);
  const SlotState first = w.state("wc", kStart);
  w.service->set_status(*first.external_id, JobState::kFailure);
  w.scheduler.step(kLineageNow);  // WAITING, retry 1
  w.scheduler.step(kLineageNow);  // READY
  w.scheduler.step(kLineageNow);  // RUNNING again
  const SlotState second = w.state("wc", kStart);
  REQUIRE(second.status == SlotStatus::kRunning);
  REQUIRE(second.run_id != first.run_id);
  auto events = w.events();
  REQUIRE(events.size() == 3);
  CHECK(type_of(events[1]) == "FAIL");
  CHECK(run_of(events[1]) == *first.run_id);
  const json::value& error = events[1].at("run").at("facets").at("errorMessage");
  CHECK_FALSE(str(error.at("message")).empty());
  CHECK(str(error.at("programmingLanguage")) == "celos");
  CHECK(type_of(events[2]) == "START");
  CHECK(run_of(events[2]) == *second.run_id);
}

TEST_CASE("a kill of a running slot ends its run with ABORT", "[lineage]") {
  LineageWorld w;
  w.scheduler.step(kLineageNow);
  w.scheduler.step(kLineageNow);
  const SlotState running = w.state("wc", kStart);
  REQUIRE(w.scheduler.kill("wc", kStart, kLineageNow));
  auto events = w.events();
  REQUIRE(events.size() == 2);
  CHECK(type_of(events[1]) == "ABORT");
  CHECK(run_of(events[1]) == *running.run_id);
}

TEST_CASE("the runs of a backfill plan's slots name the plan as their parent run", "[lineage]") {
  LineageWorld w;
  const Time later = kStart + hours(24 * 30);  // every live slot done: only the plan's slot runs
  std::vector<SlotState> done;
  for (Time t = later - kSlidingWindow; t < later + hours(1); t += hours(1))
    done.push_back(SlotState::of({"wc", t}, SlotStatus::kSuccess));
  REQUIRE(w.db->put_slots(done));
  BackfillRequest request;
  request.workflows = "wc";
  request.start = kStart;
  request.end = kStart + hours(1);
  request.now = later;
  auto created = Backfills(*w.scheduler.config(), *w.db).create(request);
  REQUIRE(created);
  const std::string plan = created->id.value();
  for (int i = 0; i < 4 && !w.state("wc", kStart).run_id; ++i) w.scheduler.step(later);
  const SlotState running = w.state("wc", kStart);
  REQUIRE(running.run_id);
  REQUIRE(running.backfill == plan);
  w.service->set_status(*running.external_id, JobState::kSuccess);
  w.scheduler.step(later);
  auto events = w.events();
  REQUIRE(events.size() == 2);  // START and COMPLETE, both naming the plan
  for (const json::object& e : events) {
    const json::value& parent = e.at("run").at("facets").at("parent");
    CHECK(str(parent.at("job").at("namespace")) == "prod");
    CHECK(str(parent.at("job").at("name")) == "backfill/" + plan);
    CHECK(str(parent.at("run").at("runId")) == backfill_run_id("prod", plan));
    CHECK(str(parent.at("_schemaURL")).find("ParentRunFacet") != std::string::npos);
  }
}

TEST_CASE("a plan's parent run id is a UUID named by the namespace and the plan id", "[lineage]") {
  const std::string id = backfill_run_id("prod", "bf-20261126T223000-4f2a9c");
  // The first 128 bits of SHA-256("celos backfill 4:prod/bf-20261126T223000-4f2a9c") (Python's
  // hashlib), version 8, variant 10: fixed, so a plan's runs keep their parent across versions.
  CHECK(id == "5dbebbae-666f-838e-8d45-aed80db68258");
  CHECK(backfill_run_id("prod", "bf-20261126T223000-4f2a9c") == id);
  CHECK(backfill_run_id("test", "bf-20261126T223000-4f2a9c") != id);
  CHECK(backfill_run_id("prod", "bf-20261126T223000-4f2a9d") != id);
  CHECK(backfill_run_id("a/b", "c") != backfill_run_id("a", "b/c"));
}

TEST_CASE("a crash at any write keeps an event exactly when its slot change was stored",
          "[lineage]") {
  // Fail at write n (spool appends and slot files alike), "crash", open the spool again: every
  // START left is of a slot stored RUNNING with its run id, and every RUNNING slot has its START.
  for (int n = 1; n <= 12; ++n) {
    CAPTURE(n);
    LineageWorld w;
    w.scheduler.step(kLineageNow);  // READY
    w.db_fs->fail_at_write(n);
    w.scheduler.step(kLineageNow);  // RUNNING, or not
    w.db_fs->fail_at_write(0);
    w.open();
    const SlotState stored = w.state("wc", kStart);
    auto events = w.events();
    if (stored.status == SlotStatus::kRunning) {
      REQUIRE(events.size() == 1);
      CHECK(run_of(events[0]) == *stored.run_id);
    } else {
      CHECK(events.empty());
    }
  }
}

TEST_CASE(
    "an event prepared but never settled is kept after a restart only if its change is stored",
    "[lineage]") {
  LineageWorld w;
  w.scheduler.step(kLineageNow);
  SlotState ready = w.state("wc", kStart);
  SlotState running = ready.running("job-9").value();
  running.run_id = new_run_id(kLineageNow);
  const SlotChange change{ready, running, kLineageNow, "step"};
  REQUIRE(w.spool->prepare({change}));  // the crash comes before the slot is written
  w.open();
  CHECK(w.events().empty());
  REQUIRE(w.spool->prepare({change}));
  REQUIRE(w.db->put_slots({running}));  // ... or after it, before settle
  w.open();
  REQUIRE(w.events().size() == 1);
  CHECK(run_of(w.events()[0]) == *running.run_id);
}

namespace {
// Records the spool's appends and syncs and the database's writes, in order; can refuse syncs.
class OrderingFileSystem final : public FileSystemWrapper {
 public:
  using FileSystemWrapper::FileSystemWrapper;
  std::vector<std::string> calls;
  bool refuse_sync = false;

  Result<void> append_files_unsynced(const std::vector<FileWrite>& files) override {
    calls.push_back("append " + files.at(0).path);
    return FileSystemWrapper::append_files_unsynced(files);
  }
  Result<void> sync_files(const std::vector<std::string>& paths) override {
    calls.push_back("sync " + paths.at(0));
    if (refuse_sync) return fail("disk full");
    return FileSystemWrapper::sync_files(paths);
  }
  Result<void> write_files_after(const std::vector<FileWrite>& files,
                                 const std::function<Result<void>()>& before_visible) override {
    calls.push_back("write " + files.at(0).path.substr(0, files.at(0).path.find('/', 4)));
    return FileSystemWrapper::write_files_after(files, before_visible);
  }
};
}  // namespace

TEST_CASE(
    "a write's events are synced by the database's write, before its states, a failed sync "
    "stores nothing",
    "[lineage]") {
  LineageWorld w;  // its workflow; the database and spool below are on a recording file system
  auto fs = std::make_shared<OrderingFileSystem>(std::make_shared<MemFileSystem>());
  auto db = make_file_state_database(fs, "/db");
  auto spool = LineageSpool::open(
      {fs, "/db/lineage", 100, {}}, *db, [&] { return WorkflowConfigPtr(w.config); }, options());
  REQUIRE(spool);
  auto change = [](Time t) {
    SlotState ready = SlotState::of({"wc", t}, SlotStatus::kReady);
    SlotState running = ready.running("job").value();
    running.run_id = new_run_id(kLineageNow);
    return SlotChange{ready, running, kLineageNow, "step"};
  };
  fs->calls.clear();
  REQUIRE(put_changes(*db, spool->get(), {change(kStart)}));
  CHECK(fs->calls == std::vector<std::string>{"append /db/lineage/spool.jsonl", "write /db/state",
                                              "sync /db/lineage/spool.jsonl"});
  CHECK((*spool)->pending(10).size() == 1);

  fs->refuse_sync = true;
  auto refused = put_changes(*db, spool->get(), {change(kStart + hours(1))});
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Matchers::Contains("disk full"));
  CHECK_FALSE(db->get_slot({"wc", kStart + hours(1)}).value());  // not stored ...
  CHECK((*spool)->pending(10).size() == 1);                      // ... and no event for it
}

TEST_CASE("a full spool drops its oldest events and counts them", "[lineage]") {
  LineageWorld w(2);
  w.start_runs(3);
  CHECK(w.spool->size() == 2);
  CHECK(w.spool->dropped() == 1);
  CHECK(str(json::parse(w.spool->pending(1)[0].event.json)
                .at("run")
                .at("facets")
                .at("nominalTime")
                .at("nominalStartTime")) == format_time(kStart + hours(1)));
}

TEST_CASE("the sender posts in order, retries 5xx and network errors, drops a 4xx after 3 tries",
          "[lineage]") {
  LineageWorld w;
  w.start_runs(3);
  auto http = std::make_shared<FakeHttpClient>();
  std::vector<int> answers = {503, 0, 200, 400, 400, 400, 201};  // 0: connection refused
  std::size_t next = 0;
  http->on([&](const HttpRequest&) -> std::optional<Result<HttpResponse>> {
    const int status = answers.at(next++);
    if (status == 0) return Result<HttpResponse>(fail("refused", ErrorCode::kUnavailable));
    return Result<HttpResponse>(HttpResponse{status, {}, "answer"});
  });
  int sent = 0, rejected = 0;
  LineageSenderOptions o;
  o.on_sent = [&] { ++sent; };
  o.on_rejected = [&] { ++rejected; };
  LineageSender sender(
      *w.spool, make_http_lineage_transport(http, "http://m:5000/api/v1/lineage", "t0k"), o, false);
  CHECK(sender.send_due() == std::chrono::seconds(1));  // 503
  CHECK(sender.send_due() == std::chrono::seconds(2));  // refused: twice as long
  CHECK(sender.send_due() == std::chrono::seconds(1));  // 200, then the first 400
  CHECK(sender.send_due() == std::chrono::seconds(2));  // 400 again
  CHECK(sender.send_due() == std::nullopt);             // 400 a third time: dropped; 201
  CHECK(sent == 2);
  CHECK(rejected == 1);
  CHECK(w.spool->size() == 0);
  REQUIRE(http->requests.size() == 7);
  CHECK(http->requests[0].method == "POST");
  CHECK(http->requests[0].url == "http://m:5000/api/v1/lineage");
  CHECK(http->requests[0].body == http->requests[1].body);  // the same event, retried
  CHECK(http->requests[3].body != http->requests[2].body);  // then the next, in order
  bool json_type = false, bearer = false;
  for (const auto& [k, v] : http->requests[0].headers) {
    json_type |= k == "Content-Type" && v == "application/json";
    bearer |= k == "Authorization" && v == "Bearer t0k";
  }
  CHECK(json_type);
  CHECK(bearer);
  w.open();  // the removals are durable
  CHECK(w.spool->size() == 0);
}

TEST_CASE("a malformed collector url is refused saying why", "[lineage]") {
  CHECK(check_lineage_url("http://marquez:5000/api/v1/lineage"));
  CHECK(check_lineage_url("https://lineage.example/x"));
  CHECK_THAT(check_lineage_url("marquez:5000").error().message, Catch::Contains("http://"));
  CHECK_THAT(check_lineage_url("http:///api").error().message, Catch::Contains("no host"));
  CHECK_THAT(check_lineage_url("http://a b/").error().message, Catch::Contains("white space"));
}

TEST_CASE("dataset namespaces come from the file system: hdfs://nameservice, file://host",
          "[lineage]") {
  const LineageOptions o = options();
  CHECK(lineage_dataset_namespace("hdfs://ns1", o) == "hdfs://ns1");
  CHECK(lineage_dataset_namespace("hdfs://nn:8020/base", o) == "hdfs://nn:8020");
  CHECK(lineage_dataset_namespace("webhdfs://nn:9870", o) == "hdfs://nn:9870");
  CHECK(lineage_dataset_namespace("file:///", o) == "file://box");
  CHECK(lineage_dataset_namespace("", o) == "file://box");
}
