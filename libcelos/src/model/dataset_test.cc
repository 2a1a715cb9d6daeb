// Datasets: linking, triggers, mode new and atomic outputs, as scheduler stories over fakes.
#include "celos/dataset.h"

#include <catch2/catch.hpp>

#include "celos/scheduler.h"
#include "model/dataset_step.h"
#include "testing/scheduler_world.h"

using namespace celos;
using celos::testing::FakeExternalService;
using celos::testing::kStart;
using std::chrono::hours;
using std::chrono::minutes;

namespace {

// A command-like service: celos writes the done flags of its successful slots.
class CommandLikeService : public FakeExternalService {
 public:
  ServiceTraits traits() const override { return {.writes_done_flags = true}; }
  Result<std::string> submit_with(const SlotId& slot, const SubmitContext& context) override {
    contexts.push_back(context);
    return submit(slot);
  }
  std::vector<SubmitContext> contexts;
};

// The scheduler world with dataset declarations; workflows have no trigger unless given one.
struct DatasetWorld : celos::testing::SchedulerWorld {
  std::vector<DatasetDeclaration> declarations;

  void dataset(std::string id, std::string path) {
    declarations.push_back({Dataset{id, std::move(path), "", "_SUCCESS"}, "a.js", 1});
  }

  Workflow& add(std::string id, std::shared_ptr<ExternalService> on, TriggerPtr trigger = nullptr) {
    Workflow w = workflow(id, std::move(on));
    w.trigger = std::move(trigger);
    w.file = id + ".js";
    return SchedulerWorld::add(std::move(w));
  }

  void link() { link_datasets(*config, declarations); }
};

std::vector<std::string> messages(const WorkflowConfig& config) {
  std::vector<std::string> out;
  for (const LoadError& e : config.errors) out.push_back(e.file + ": " + e.message);
  return out;
}

}  // namespace

TEST_CASE("input variables and environment names follow the dataset id") {
  CHECK(input_env_name("clicks-clean.v2") == "CELOS_INPUT_CLICKS_CLEAN_V2");
  CHECK(replace_variables("a ${inputs.x} ${year} ${inputs.y}", {{"inputs.x", "/p1,/p2"}}) ==
        "a /p1,/p2 ${year} ${inputs.y}");
  Dataset ds{"d", "/data/${year}${month}${day}/${hour}/", "", "_DONE"};
  CHECK(ds.done_flag_path(kStart + hours(5)) == "/data/20150913/05/_DONE");
}

TEST_CASE("only instance paths below the root without dot components may be removed") {
  CHECK(check_removable("/data/clicks/2015"));
  CHECK_FALSE(check_removable("/"));
  CHECK_FALSE(check_removable("/data"));
  CHECK_FALSE(check_removable("/data/../etc"));
  CHECK_FALSE(check_removable("data/x"));
  CHECK_FALSE(check_removable("/data//x"));
}

TEST_CASE("linking reports unknown datasets, second producers and output paths that merge slots") {
  DatasetWorld w;
  auto service = std::make_shared<CommandLikeService>();
  w.dataset("clicks", "/data/clicks/${year}/${month}/${day}/${hour}");
  w.dataset("daily", "/data/daily/${year}-${month}-${day}");
  w.dataset("fixed", "/data/fixed");
  w.add("a", service, make_always_trigger()).outputs = {{"clicks"}};
  w.add("b", service, make_always_trigger()).outputs = {{"clicks"}};
  w.add("c", service).inputs = {{"nope"}};
  w.add("d", service, make_always_trigger()).outputs = {{"daily"}};
  w.add("e", service, make_always_trigger()).outputs = {{"fixed"}};
  w.link();
  CHECK(w.config->workflows.count("a"));
  CHECK_FALSE(w.config->workflows.count("b"));
  CHECK_FALSE(w.config->workflows.count("c"));
  CHECK_FALSE(w.config->workflows.count("d"));
  CHECK_FALSE(w.config->workflows.count("e"));
  const auto errors = messages(*w.config);
  REQUIRE(errors.size() == 4);
  CHECK_THAT(errors[0], Catch::Contains("b.js") && Catch::Contains("at most one producer"));
  CHECK_THAT(errors[1], Catch::Contains("c.js") && Catch::Contains("unknown dataset \"nope\""));
  CHECK_THAT(errors[2], Catch::Contains("d.js") && Catch::Contains("does not tell"));
  CHECK_THAT(errors[3], Catch::Contains("e.js") && Catch::Contains("no time variables"));
}

TEST_CASE("a dataset declared again differently is an error of the later file") {
  DatasetWorld w;
  w.declarations.push_back({Dataset{"x", "/x/${hour}", "", "_SUCCESS"}, "a.js", 1});
  w.declarations.push_back({Dataset{"x", "/x/${hour}", "", "_SUCCESS"}, "b.js", 2});
  w.declarations.push_back({Dataset{"x", "/y/${hour}", "", "_SUCCESS"}, "c.js", 3});
  w.link();
  REQUIRE(w.config->errors.size() == 1);
  CHECK(w.config->errors[0].file == "c.js");
  CHECK(w.config->errors[0].line == 3);
  CHECK(w.config->datasets.at("x").path == "/x/${hour}");
}

TEST_CASE("a cycle through datasets is an error only when its offsets add up to 0") {
  DatasetWorld w;
  auto service = std::make_shared<CommandLikeService>();
  w.dataset("p", "/p/${day}/${hour}");
  w.dataset("q", "/q/${day}/${hour}");
  w.dataset("own", "/own/${day}/${hour}");
  Workflow& a = w.add("a", service);
  a.inputs = {{"q"}};
  a.outputs = {{"p"}};
  Workflow& b = w.add("b", service);
  b.inputs = {{"p"}};
  b.outputs = {{"q"}};
  Workflow& inc = w.add("inc", service);  // reads its own previous hour: fine
  inc.inputs = {{"own", -3600}};
  inc.outputs = {{"own"}};
  w.link();
  CHECK(w.config->workflows.count("a"));
  CHECK_FALSE(w.config->workflows.count("b"));
  CHECK(w.config->workflows.count("inc"));
  REQUIRE(w.config->errors.size() == 1);
  CHECK_THAT(w.config->errors[0].message, Catch::Contains("add up to 0"));
}

TEST_CASE("the derived trigger waits for the producer's SUCCESS, an announcement or a done flag") {
  DatasetWorld w;
  auto service = std::make_shared<CommandLikeService>();
  w.dataset("raw", "/raw/${year}${month}${day}/${hour}");
  w.dataset("clean", "/clean/${year}${month}${day}/${hour}");
  w.add("clean", service, make_always_trigger()).outputs = {{"clean"}};
  w.add("report", service).inputs = {{"clean"}, {"raw"}};
  w.link();
  REQUIRE(w.config->errors.empty());
  const Time now = kStart + minutes(30);
  auto status = w.scheduler.trigger_status("report", kStart, now);
  REQUIRE(status);
  CHECK(status->type == "AndTrigger");
  REQUIRE(status->sub_statuses.size() == 2);
  CHECK(status->sub_statuses[0].type == "DatasetTrigger");
  CHECK_FALSE(status->sub_statuses[0].ready);
  CHECK_FALSE(status->sub_statuses[1].ready);

  REQUIRE(w.db->put_slots({SlotState::of({"clean", kStart}, SlotStatus::kSuccess, "j")}));
  REQUIRE(w.data_fs->write("/raw/20150913/00/_SUCCESS", ""));
  const int before = w.data_fs->exists_calls();
  status = w.scheduler.trigger_status("report", kStart, now);
  REQUIRE(status);
  CHECK(status->ready);
  CHECK(w.data_fs->exists_calls() == before + 1);  // only the dataset without a producer

  // An announcement is enough, with no file system call.
  REQUIRE(w.db->announce_instance("raw", kStart + hours(1), now));
  REQUIRE(w.db->announce_instance("raw", kStart + hours(1), now));  // idempotent
  REQUIRE(
      w.db->put_slots({SlotState::of({"clean", kStart + hours(1)}, SlotStatus::kSuccess, "j")}));
  const int calls = w.data_fs->exists_calls();
  status = w.scheduler.trigger_status("report", kStart + hours(1), now);
  REQUIRE(status);
  CHECK(status->ready);
  CHECK(w.data_fs->exists_calls() == calls);
}

TEST_CASE("statusTrigger treats a slot with nothing stored as WAITING") {
  DatasetWorld w;
  auto service = std::make_shared<CommandLikeService>();
  w.add("x", service, make_always_trigger());
  w.add("alert", service, make_status_trigger("x", {"FAILURE", "WAIT_TIMEOUT"}));
  w.add("idle", service, make_status_trigger("x", {"WAITING"}));
  auto alert = w.scheduler.trigger_status("alert", kStart, kStart);
  REQUIRE(alert);
  CHECK(alert->type == "StatusTrigger");
  CHECK_FALSE(alert->ready);
  CHECK(w.scheduler.trigger_status("idle", kStart, kStart)->ready);
  REQUIRE(w.db->put_slots({SlotState::of({"x", kStart}, SlotStatus::kFailure, "j")}));
  CHECK(w.scheduler.trigger_status("alert", kStart, kStart)->ready);
}

TEST_CASE("mode new hands each instance to one successful slot and stores it with the slot") {
  DatasetWorld w;
  auto producer = std::make_shared<CommandLikeService>();
  auto rollup = std::make_shared<CommandLikeService>();
  w.dataset("hourly", "/h/${year}${month}${day}/${hour}");
  w.add("import", producer, make_always_trigger()).outputs = {{"hourly"}};
  Workflow& r = w.add("rollup", rollup);
  r.schedule = make_cron_schedule(CronExpression::parse("0 0 */3 * * ?").value());
  r.inputs = {{"hourly", 0, InputMode::kNew, 2}};
  w.link();
  REQUIRE(w.config->errors.empty());
  // import 00:00 and 01:00 succeed; 02:00 fails.
  REQUIRE(
      w.db->put_slots({SlotState::of({"import", kStart}, SlotStatus::kSuccess, "a"),
                       SlotState::of({"import", kStart + hours(1)}, SlotStatus::kSuccess, "b"),
                       SlotState::of({"import", kStart + hours(2)}, SlotStatus::kFailure, "c")}));
  const Time now = kStart + hours(3) + minutes(1);  // rollup slots 00:00 and 03:00
  w.scheduler.step(now, std::set<std::string>{"rollup"});
  // 00:00 sees one instance (minInstances 2): waits; 03:00 sees 00:00 and 01:00 (03:00 not yet).
  CHECK(w.state("rollup", kStart).status == SlotStatus::kWaiting);
  CHECK(w.state("rollup", kStart + hours(3)).status == SlotStatus::kReady);
  w.scheduler.step(now, std::set<std::string>{"rollup"});
  const SlotState running = w.state("rollup", kStart + hours(3));
  REQUIRE(running.status == SlotStatus::kRunning);
  CHECK(running.consumed.at("hourly") == std::vector<Time>{kStart, kStart + hours(1)});
  REQUIRE(rollup->contexts.size() == 1);
  CHECK(rollup->contexts[0].env.at("CELOS_INPUT_HOURLY") == "/h/20150913/00,/h/20150913/01");
  CHECK(rollup->contexts[0].variables.at("inputs.hourly") == "/h/20150913/00,/h/20150913/01");

  // While it runs, and after it succeeded, no other slot gets those instances.
  auto held = w.scheduler.trigger_status("rollup", kStart + hours(6), now);
  REQUIRE(held);
  CHECK_FALSE(held->ready);
  rollup->set_status("job-1", ExternalStatus::kSuccess);
  w.scheduler.step(now, std::set<std::string>{"rollup"});
  CHECK(w.state("rollup", kStart + hours(3)).status == SlotStatus::kSuccess);
  CHECK(w.state("rollup", kStart + hours(3)).consumed.at("hourly").size() == 2);
  CHECK_FALSE(w.scheduler.trigger_status("rollup", kStart + hours(6), now)->ready);

  // A rerun releases them.
  REQUIRE(w.scheduler.rerun("rollup", kStart + hours(3), now));
  CHECK(w.state("rollup", kStart + hours(3)).consumed.empty());
  CHECK(w.scheduler.trigger_status("rollup", kStart + hours(6), now)->ready);
}

TEST_CASE(
    "atomic outputs: leftovers go before submit, failures lose incomplete output, success "
    "gets its done flag") {
  DatasetWorld w;
  auto service = std::make_shared<CommandLikeService>();
  w.dataset("out", "/out/${year}${month}${day}/${hour}");
  Workflow& wf = w.add("job", service, make_always_trigger());
  wf.outputs = {{"out"}};
  w.link();
  const Time now = kStart + hours(2) + minutes(1);  // slots 00:00 and 01:00
  REQUIRE(w.data_fs->write("/out/20150913/00/part-0", "half"));
  REQUIRE(w.data_fs->write("/elsewhere/keep", "x"));
  w.scheduler.step(now);  // READY
  w.scheduler.step(now);  // 00:00 submitted: its leftover is removed first
  CHECK_FALSE(w.data_fs->exists("/out/20150913/00/part-0").value());
  CHECK(w.data_fs->exists("/elsewhere/keep").value());

  // The job writes its output and succeeds: celos writes the done flag, then SUCCESS.
  REQUIRE(w.data_fs->write("/out/20150913/00/part-0", "whole"));
  service->set_status("job-1", ExternalStatus::kSuccess);
  w.scheduler.step(now);
  CHECK(w.state("job", kStart).status == SlotStatus::kSuccess);
  CHECK(w.data_fs->exists("/out/20150913/00/_SUCCESS").value());

  // 01:00 runs, writes half its output and fails: the output is removed.
  w.scheduler.step(now);
  REQUIRE(w.state("job", kStart + hours(1)).status == SlotStatus::kRunning);
  REQUIRE(w.data_fs->write("/out/20150913/01/part-0", "half"));
  service->set_status("job-2", ExternalStatus::kFailure);
  w.scheduler.step(now);
  CHECK(w.state("job", kStart + hours(1)).status == SlotStatus::kFailure);
  CHECK_FALSE(w.data_fs->exists("/out/20150913/01").value());

  // Rerunning the SUCCESS slot removes its done flag first.
  REQUIRE(w.scheduler.rerun("job", kStart, now));
  CHECK_FALSE(w.data_fs->exists("/out/20150913/00/_SUCCESS").value());
  CHECK(w.data_fs->exists("/out/20150913/00/part-0").value());
}

TEST_CASE("a done flag that cannot be written keeps the slot RUNNING") {
  DatasetWorld w;
  auto service = std::make_shared<CommandLikeService>();
  w.dataset("out", "/out/${year}${month}${day}/${hour}");
  w.add("job", service, make_always_trigger()).outputs = {{"out"}};
  w.link();
  const Time now = kStart + hours(1) + minutes(1);
  w.scheduler.step(now);
  w.scheduler.step(now);
  service->set_status("job-1", ExternalStatus::kSuccess);
  w.data_fs->set_down(true);
  auto report = w.scheduler.step(now);
  CHECK_FALSE(report.errors.empty());
  CHECK(w.state("job", kStart).status == SlotStatus::kRunning);
  w.data_fs->set_down(false);
  w.scheduler.step(now);
  CHECK(w.state("job", kStart).status == SlotStatus::kSuccess);
}

TEST_CASE(
    "killing a slot that never ran removes nothing, killing a running one removes its "
    "incomplete output") {
  DatasetWorld w;
  auto service = std::make_shared<CommandLikeService>();
  w.dataset("out", "/out/${year}${month}${day}/${hour}");
  w.add("job", service, make_always_trigger()).outputs = {{"out"}};
  w.link();
  REQUIRE(w.data_fs->write("/out/20150913/01/part-0", "someone else's"));
  REQUIRE(w.scheduler.kill("job", kStart + hours(1)));
  CHECK(w.data_fs->exists("/out/20150913/01/part-0").value());

  const Time now = kStart + hours(1) + minutes(1);
  w.scheduler.step(now);
  w.scheduler.step(now);
  REQUIRE(w.data_fs->write("/out/20150913/00/part-0", "half"));
  REQUIRE(w.scheduler.kill("job", kStart));
  CHECK_FALSE(w.data_fs->exists("/out/20150913/00").value());
}

TEST_CASE("atomicOutputs false leaves outputs alone") {
  DatasetWorld w;
  auto service = std::make_shared<CommandLikeService>();
  w.dataset("out", "/out/${year}${month}${day}/${hour}");
  Workflow& wf = w.add("job", service, make_always_trigger());
  wf.outputs = {{"out"}};
  wf.atomic_outputs = false;
  w.link();
  const Time now = kStart + hours(1) + minutes(1);
  REQUIRE(w.data_fs->write("/out/20150913/00/part-0", "mine"));
  w.scheduler.step(now);
  w.scheduler.step(now);
  service->set_status("job-1", ExternalStatus::kSuccess);
  w.scheduler.step(now);
  CHECK(w.data_fs->exists("/out/20150913/00/part-0").value());
  CHECK_FALSE(w.data_fs->exists("/out/20150913/00/_SUCCESS").value());
}

// Issue 33: readiness is decided per slot, so every slot of a minutely consumer may be READY
// for the same single instance; the count at submit time decides.
TEST_CASE(
    "mode new: a pick with fewer than minInstances new instances at submit time waits again") {
  DatasetWorld w;
  auto consumer = std::make_shared<CommandLikeService>();
  w.dataset("ext", "/e/${year}${month}${day}/${hour}${minute}");
  Workflow& c = w.add("use", consumer);
  c.schedule = make_cron_schedule(CronExpression::parse("0 * * * * ?").value());
  c.start_time = kStart + hours(1);
  c.inputs = {{"ext", 0, InputMode::kNew, 1}};
  w.link();
  REQUIRE(w.config->errors.empty());
  REQUIRE(w.db->announce_instance("ext", kStart + hours(1), kStart));
  const Time now = kStart + hours(1) + minutes(2) + std::chrono::seconds(30);
  const std::set<std::string> only{"use"};
  w.scheduler.step(now, only);  // slots 01:00, 01:01, 01:02 each see the one instance
  for (int m = 0; m < 3; ++m) {
    CHECK(w.state("use", kStart + hours(1) + minutes(m)).status == SlotStatus::kReady);
  }
  // Three slots run one after another (serial(1)); only the first gets the instance.
  for (int round = 0; round < 6; ++round) {
    for (std::size_t i = 0; i < consumer->submitted.size(); ++i) {
      consumer->set_status("job-" + std::to_string(i + 1), ExternalStatus::kSuccess);
    }
    w.scheduler.step(now, only);
  }
  REQUIRE(consumer->contexts.size() == 1);
  CHECK(consumer->contexts[0].env.at("CELOS_INPUT_EXT") == "/e/20150913/0100");
  const SlotState first = w.state("use", kStart + hours(1));
  CHECK(first.status == SlotStatus::kSuccess);
  CHECK(first.consumed.at("ext") == std::vector<Time>{kStart + hours(1)});
  for (int m = 1; m < 3; ++m) {
    const SlotState later = w.state("use", kStart + hours(1) + minutes(m));
    INFO("slot 01:0" << m);
    CHECK(later.status == SlotStatus::kWaiting);
    CHECK(later.consumed.empty());
    CHECK_THAT(later.message.value_or(""), Catch::Contains("0 new instances of dataset ext"));
  }
}

TEST_CASE("mode new: two picks of one step share out the instances, the short one waits") {
  DatasetWorld w;
  auto consumer = std::make_shared<CommandLikeService>();
  w.dataset("ext", "/e/${year}${month}${day}/${hour}${minute}");
  Workflow& c = w.add("use", consumer);
  c.strategy = make_serial_strategy(2);
  c.inputs = {{"ext", 0, InputMode::kNew, 3}};
  w.link();
  REQUIRE(w.config->errors.empty());
  for (int m : {10, 20, 30}) REQUIRE(w.db->announce_instance("ext", kStart + minutes(m), kStart));
  const Time now = kStart + hours(2) + minutes(5);  // slots 00:00, 01:00, 02:00
  const std::set<std::string> only{"use"};
  w.scheduler.step(now, only);
  CHECK(w.state("use", kStart).status == SlotStatus::kWaiting);             // sees none
  REQUIRE(w.state("use", kStart + hours(1)).status == SlotStatus::kReady);  // sees the three
  REQUIRE(w.state("use", kStart + hours(2)).status == SlotStatus::kReady);  // the same three
  w.scheduler.step(now, only);  // both picked in one step: 01:00 takes them, 02:00 has 0 < 3
  const SlotState running = w.state("use", kStart + hours(1));
  CHECK(running.status == SlotStatus::kRunning);
  CHECK(running.consumed.at("ext").size() == 3);
  const SlotState waiting = w.state("use", kStart + hours(2));
  CHECK(waiting.status == SlotStatus::kWaiting);
  CHECK(waiting.consumed.empty());
  CHECK_THAT(waiting.message.value_or(""), Catch::Contains("3 needed"));
  CHECK(consumer->contexts.size() == 1);
  w.scheduler.step(now, only);  // and it stays WAITING: nothing new arrived
  CHECK(w.state("use", kStart + hours(2)).status == SlotStatus::kWaiting);
}
