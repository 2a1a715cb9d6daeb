// The dataset routes through celos::Api (SPEC §14, issue 33): the instance listing and lineage
// read announced instances once per request, the listing is capped and says so, and an
// announcement whose path another announced instance already has is refused.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "celos/api.h"
#include "celos/dataset.h"
#include "testing/api_world.h"

namespace {

namespace json = boost::json;
using namespace celos;
using celos::testing::kStart;
using std::chrono::hours;
using std::chrono::minutes;

const Time kNow = kStart + hours(23);

// A file state database that counts the reads of announced instances.
class CountingDb final : public StateDatabase {
 public:
  explicit CountingDb(std::unique_ptr<StateDatabase> db) : db_(std::move(db)) {}
  int announced_reads = 0;
  int announce_groups = 0;

  Result<std::vector<Time>> announced_instances(std::string_view d, Time s, Time e) override {
    ++announced_reads;
    return db_->announced_instances(d, s, e);
  }
  Result<void> announce_instance(std::string_view d, Time t, Time now) override {
    return db_->announce_instance(d, t, now);
  }
  Result<void> announce_instances(const std::vector<Announcement>& all, Time now) override {
    ++announce_groups;
    return db_->announce_instances(all, now);
  }
  Result<std::optional<SlotState>> get_slot(const SlotId& id) override { return db_->get_slot(id); }
  Result<std::vector<SlotState>> get_slots(std::string_view w, Time s, Time e) override {
    return db_->get_slots(w, s, e);
  }
  Result<void> put_slots(const std::vector<SlotState>& states) override {
    return db_->put_slots(states);
  }
  Result<void> mark_rerun(const SlotId& id, Time now) override { return db_->mark_rerun(id, now); }
  Result<std::vector<Time>> rerun_times(std::string_view w, Time now) override {
    return db_->rerun_times(w, now);
  }
  Result<bool> is_paused(std::string_view w) override { return db_->is_paused(w); }
  Result<void> set_paused(std::string_view w, bool p) override { return db_->set_paused(w, p); }
  Result<Maintenance> maintenance() override { return db_->maintenance(); }
  Result<void> set_maintenance(const Maintenance& m) override { return db_->set_maintenance(m); }
  Result<void> append_history(const std::vector<SlotHistoryEntry>& entries) override {
    return db_->append_history(entries);
  }
  Result<std::vector<SlotHistoryEntry>> slot_history(const SlotId& id) override {
    return db_->slot_history(id);
  }

 private:
  std::unique_ptr<StateDatabase> db_;
};

struct DatasetsApiWorld : celos::testing::ApiWorld {
  // "ext" (minutely paths) is read by "use", a daily consumer of mode new; "day" has daily paths.
  DatasetsApiWorld()
      : ApiWorld(
            {.wrap_db = [](auto inner) { return std::make_unique<CountingDb>(std::move(inner)); },
             .now = kNow}) {
    remote = "10.0.0.7:5555";
    Workflow& w = add(workflow("use"));
    w.schedule = make_cron_schedule(CronExpression::parse("0 0 22 * * ?").value());
    w.trigger = nullptr;
    w.inputs = {{"ext", 0, InputMode::kNew, 1}};
    link_datasets(
        *config,
        {{Dataset{"ext", "/e/${year}${month}${day}/${hour}${minute}", "", "_SUCCESS"}, "d.js", 1},
         {Dataset{"day", "/d/${year}-${month}-${day}", "", "_SUCCESS"}, "d.js", 2}});
    REQUIRE(config->errors.empty());
    serve({.clock = clock_function(), .db = db.get()});
  }

  CountingDb& counting() { return static_cast<CountingDb&>(*db); }

  void announce(int count) {
    for (int i = 0; i < count; ++i)
      REQUIRE(db->announce_instance("ext", kStart + minutes(i), kStart));
  }

  json::object get(const std::string& target) { return call_json("GET", target).as_object(); }
};

}  // namespace

TEST_CASE("listing 1,200 announced instances reads them once and pages newest first") {
  DatasetsApiWorld w;
  w.announce(1200);  // 00:00 .. 19:59
  const std::string range =
      "/api/v1/datasets/ext/instances?start=2015-09-13T00:00Z&end=2015-09-14T00:00Z";
  w.counting().announced_reads = 0;
  json::object page = w.get(range);
  CHECK(w.counting().announced_reads == 1);
  const auto& list = page.at("instances").as_array();
  REQUIRE(list.size() == 1000);  // the default cap
  // First the time the consumer looks at (22:00, not there), then the announced ones.
  CHECK(list[0].at("time") == "2015-09-13T22:00:00.000Z");
  CHECK(list[0].at("present") == false);
  CHECK(list[1].at("time") == "2015-09-13T19:59:00.000Z");
  CHECK(list[1].at("present") == true);
  CHECK(list[1].at("announced") == true);
  CHECK(list[999].at("time") == "2015-09-13T03:21:00.000Z");
  CHECK(page.at("truncated") == true);
  CHECK(page.at("next") == "2015-09-13T03:21:00.000Z");
  // The next page ends (exclusive) where this one stopped.
  json::object rest = w.get(range.substr(0, range.find("&end=")) +
                            "&end=" + std::string(page.at("next").as_string()));
  CHECK(rest.at("instances").as_array().size() == 201);
  CHECK(rest.at("truncated") == false);
  CHECK_FALSE(rest.contains("next"));
  CHECK(w.get(range + "&limit=10000").at("instances").as_array().size() == 1201);
  CHECK(w.get(range + "&limit=5").at("instances").as_array().size() == 5);
  CHECK(w.call("GET", range + "&limit=0").status == 400);
  CHECK(w.call("GET", range + "&limit=10001").status == 400);
}

TEST_CASE("lineage of a slot with 1,200 new instances reads the announcements once") {
  DatasetsApiWorld w;
  w.announce(1200);
  w.counting().announced_reads = 0;
  json::object lineage = w.get("/api/v1/lineage?id=use&time=2015-09-13T22:00Z");
  CHECK(w.counting().announced_reads == 1);
  const auto& inputs = lineage.at("inputs").as_array();
  REQUIRE(inputs.size() == 1200);
  CHECK(inputs[0].at("path") == "/e/20150913/0000");
  CHECK(inputs[0].at("present") == true);
}

TEST_CASE("an announcement whose path an announced instance already has is refused") {
  DatasetsApiWorld w;
  CHECK(w.call("POST", "/api/v1/datasets/day/instances?time=2015-09-13T01:00Z").status == 200);
  // Idempotent: the same time again is fine.
  CHECK(w.call("POST", "/api/v1/datasets/day/instances?time=2015-09-13T01:00Z").status == 200);
  const auto refused = w.call("POST", "/api/v1/datasets/day/instances?time=2015-09-13T02:00Z");
  CHECK(refused.status == 400);
  CHECK_THAT(refused.body, Catch::Contains("/d/2015-09-13") &&
                               Catch::Contains("2015-09-13T01:00:00.000Z") &&
                               Catch::Contains("does not tell them apart"));
  // The next day is another path.
  CHECK(w.call("POST", "/api/v1/datasets/day/instances?time=2015-09-14T01:00Z").status == 200);
  // Minutely paths tell minutes apart, not seconds.
  CHECK(w.call("POST", "/api/v1/datasets/ext/instances?time=2015-09-13T01:00:00Z").status == 200);
  CHECK(w.call("POST", "/api/v1/datasets/ext/instances?time=2015-09-13T01:01:00Z").status == 200);
  CHECK(w.call("POST", "/api/v1/datasets/ext/instances?time=2015-09-13T01:01:30Z").status == 400);
}

TEST_CASE("a path's period is the one of its finest time variable") {
  const Dataset monthly{"m", "/m/${year}/${month}", "", "_SUCCESS"};
  CHECK(monthly.path_period(make_time(2015, 12, 13, 5)) ==
        std::make_pair(make_time(2015, 12, 1), make_time(2016, 1, 1)));
  const Dataset hourly{"h", "/h/${year}${month}${day}/${hour}", "", "_SUCCESS"};
  CHECK(hourly.path_period(make_time(2015, 9, 13, 5, 30)) ==
        std::make_pair(make_time(2015, 9, 13, 5), make_time(2015, 9, 13, 6)));
  CHECK_FALSE(Dataset{"f", "/fixed", "", "_SUCCESS"}.path_period(kStart));
}

TEST_CASE("announcements answered as a group are checked one by one and stored in one write") {
  DatasetsApiWorld w;
  std::vector<HttpServerRequest> requests;
  for (const char* target : {
           "/api/v1/datasets/day/instances?time=2015-09-13T01:00Z",
           "/api/v1/datasets/day/instances?time=2015-09-13T02:00Z",  // the path of the one before
           "/api/v1/datasets/nope/instances?time=2015-09-13T01:00Z",
           "/api/v1/datasets/ext/instances?time=2015-09-13T01:00Z",
           "/api/v1/datasets/ext/instances?time=2015-09-13T01:00:30Z",  // that minute's path
           "/api/v1/datasets/ext/instances?time=2015-09-13T01:01Z",
           "/api/v1/datasets/ext/instances?time=2015-09-13T01:00Z",  // again: idempotent
       }) {
    requests.push_back(w.request("POST", target));
  }
  std::vector<const HttpServerRequest*> group;
  for (const auto& r : requests) group.push_back(&r);
  const auto answers = w.api->handle_group(group);
  std::vector<int> statuses;
  for (const auto& a : answers) statuses.push_back(a.status);
  CHECK(statuses == std::vector<int>{200, 400, 404, 200, 400, 200, 200});
  CHECK_THAT(answers[1].body, Catch::Contains("does not tell them apart"));
  CHECK(w.counting().announce_groups == 1);
  CHECK(*w.db->announced_instances("ext", kStart, kNow) ==
        std::vector<Time>{make_time(2015, 9, 13, 1), make_time(2015, 9, 13, 1, 1)});
  CHECK(*w.db->announced_instances("day", kStart, kNow) ==
        std::vector<Time>{make_time(2015, 9, 13, 1)});
}
