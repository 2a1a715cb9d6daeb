// The workflow loader over real directories: testdata/ for the error kinds and the reference
// manual's examples, temporary directories for hot reload.
#include "celos/workflow_loader.h"

#include <set>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <sys/stat.h>

#include "testing/fakes.h"
#include "testing/source_dir.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

using testing::TempDir;
using testing::write_text_file;

const std::string kTestData = ::celos::testing::source_dir() + "/libcelos/src/js/testdata";

WorkflowLoaderOptions options_for(const std::string& workflows, const std::string& defaults = "") {
  WorkflowLoaderOptions options;
  options.workflows_dir = workflows;
  options.defaults_dir = defaults;
  options.db_dir = "/nonexistent-db";
  options.max_eval_time = std::chrono::milliseconds(500);
  options.max_heap_bytes = 16 * 1024 * 1024;
  return options;
}

std::set<std::string> ids_of(const WorkflowConfig& config) {
  std::set<std::string> ids;
  for (const auto& [id, workflow] : config.workflows) ids.insert(id);
  return ids;
}

const LoadError* loader_error_in(const WorkflowConfig& config, const std::string& file) {
  for (const LoadError& error : config.errors) {
    if (error.file == file) return &error;
  }
  return nullptr;
}

// Records the file system a trigger asks about.
class FsRecorder : public TriggerContext {
 public:
  Time now() const override { return make_time(2030, 1, 1); }
  Result<bool> path_exists(const std::string& fs, const std::string& path) override {
    asked.push_back(fs + " " + path);
    return false;
  }
  Result<bool> slot_succeeded(const std::string&, Time) override { return false; }
  std::vector<std::string> asked;
};

std::string asked_path(const Workflow& workflow) {
  FsRecorder recorder;
  REQUIRE(workflow.trigger->evaluate(make_time(2015, 9, 13, 13), recorder));
  REQUIRE(recorder.asked.size() == 1);
  return recorder.asked[0];
}

std::string workflow_js(const std::string& id, const std::string& command = "true") {
  return "celos.defineWorkflow({id: '" + id +
         "', schedule: celos.hourlySchedule(), schedulingStrategy: "
         "celos.serialSchedulingStrategy(), trigger: celos.alwaysTrigger(), externalService: "
         "celos.commandExternalService('" +
         command + "')});\n";
}

TEST_CASE("every error kind is reported per file and never stops the other files") {
  auto source = make_js_workflow_source(options_for(kTestData + "/errors"));
  const WorkflowConfigPtr config = source->load();

  CHECK(ids_of(*config) == std::set<std::string>{"good-a", "partial-before", "unique-e", "scope-f",
                                                 "scope-undefined"});
  CHECK(config->errors.size() == 6);

  const LoadError* syntax = loader_error_in(*config, "b_syntax.js");
  REQUIRE(syntax);
  CHECK(syntax->line == 3);
  CHECK_THAT(syntax->message, Catch::Contains("SyntaxError"));

  const LoadError* thrown = loader_error_in(*config, "c_partial.js");
  REQUIRE(thrown);
  CHECK(thrown->line == 9);
  CHECK_THAT(thrown->message, Catch::Contains("stop here"));

  const LoadError* bad_field = loader_error_in(*config, "d_bad_field.js");
  REQUIRE(bad_field);
  CHECK(bad_field->line >= 2);
  CHECK(bad_field->line <= 9);
  CHECK_THAT(bad_field->message,
             Catch::Contains("celos.defineWorkflow: field \"maxRetryCount\" must be a number"));

  const LoadError* duplicate = loader_error_in(*config, "e_duplicate.js");
  REQUIRE(duplicate);
  CHECK(duplicate->line >= 2);
  CHECK(duplicate->line <= 8);
  CHECK_THAT(duplicate->message,
             Catch::Contains("duplicate workflow id \"good-a\": already defined in a_good.js"));
  // The earlier definition wins.
  CHECK(config->find("good-a")->schedule->describe() == "cronSchedule(0 0 * * * ?)");
  CHECK(config->find("good-a")->file == "a_good.js");

  const LoadError* loop = loader_error_in(*config, "h_runaway_loop.js");
  REQUIRE(loop);
  CHECK_THAT(loop->message, Catch::Contains("did not finish within 500 ms"));

  const LoadError* memory = loader_error_in(*config, "i_runaway_memory.js");
  REQUIRE(memory);
  CHECK_THAT(memory->message, Catch::Contains("more than 16777216 bytes"));
}

TEST_CASE("each file has its own global scope") {
  auto source = make_js_workflow_source(options_for(kTestData + "/errors"));
  const WorkflowConfigPtr config = source->load();
  // g_scope_read.js does not see SHARED nor CELOS_DEFAULT_HDFS of f_scope_set.js.
  REQUIRE(config->find("scope-undefined"));
  CHECK(asked_path(*config->find("scope-f")) == "hdfs://from-f:8020 /f");
  CHECK(asked_path(*config->find("scope-undefined")) == " /g");
}

TEST_CASE("the reference manual's examples load as written") {
  auto source = make_js_workflow_source(
      options_for(kTestData + "/manual/workflows", kTestData + "/manual/defaults"));
  const WorkflowConfigPtr config = source->load();
  for (const LoadError& error : config->errors)
    FAIL(error.file << ":" << error.line << ": " << error.message);
  CHECK(ids_of(*config) ==
        std::set<std::string>{"wordcount", "wordcount-nyc", "wordcount-lax", "my-workflow",
                              "hdfs-check", "success", "delay", "offset", "and", "three-hours",
                              "delay-not-success", "or", "not", "always", "cron-daily", "minutely",
                              "serial-3", "uses-defaults"});
  CHECK(asked_path(*config->find("wordcount-lax")) == " /input/lax/2015-09-13/1300/_READY");
  // Globals of the imported defaults file apply to the importing file.
  CHECK(asked_path(*config->find("uses-defaults")) ==
        "hdfs://nameservice1 /input/2015-09-13/_READY");
  CHECK(config->find("uses-defaults")->service->describe() ==
        "oozie http://oozie.example.com:11000/oozie");
  CHECK(config->find("serial-3")->strategy->describe() == "serialSchedulingStrategy(3)");
  CHECK(config->find("cron-daily")->schedule->describe() == "cronSchedule(0 15 10 * * ?)");
}

TEST_CASE("a missing defaults file is an error of the importing file") {
  TempDir workflows, defaults;
  write_text_file(workflows / "a.js", "\nimportDefaults('nope');\n");
  auto source = make_js_workflow_source(options_for(workflows.path(), defaults.path()));
  const WorkflowConfigPtr config = source->load();
  REQUIRE(config->errors.size() == 1);
  CHECK(config->errors[0].file == "a.js");
  CHECK(config->errors[0].line == 2);
  CHECK_THAT(config->errors[0].message,
             Catch::Contains("celos.importDefaults: no defaults file \"nope\""));
}

TEST_CASE("an error inside a defaults file names the defaults file and the importing line") {
  TempDir workflows, defaults;
  write_text_file(defaults / "broken.js", "var x = 1;\nnull.y;\n");
  write_text_file(defaults / "syntax.js", "var = ;\n");
  write_text_file(workflows / "a.js", "// one\nimportDefaults('broken');\n");
  write_text_file(workflows / "b.js", "celos.importDefaults('syntax');\n");
  auto source = make_js_workflow_source(options_for(workflows.path(), defaults.path()));
  const WorkflowConfigPtr config = source->load();
  REQUIRE(config->errors.size() == 2);
  CHECK(config->errors[0].line == 2);
  CHECK_THAT(config->errors[0].message, Catch::Contains("(at defaults/broken.js:2)"));
  CHECK(config->errors[1].line == 1);
  CHECK_THAT(config->errors[1].message,
             Catch::Contains("celos.importDefaults: defaults file \"syntax\": SyntaxError"));
}

TEST_CASE("a missing workflows directory is an error, not a crash") {
  auto source = make_js_workflow_source(options_for("/nonexistent/workflows"));
  const WorkflowConfigPtr config = source->load();
  CHECK(config->workflows.empty());
  REQUIRE(config->errors.size() == 1);
  CHECK_THAT(config->errors[0].message, Catch::Contains("/nonexistent/workflows"));
}

TEST_CASE("reloading an unchanged directory returns the same config") {
  TempDir workflows;
  write_text_file(workflows / "a.js", workflow_js("a"));
  write_text_file(workflows / "bad.js", "throw 'x';");
  auto source = make_js_workflow_source(options_for(workflows.path()));
  const WorkflowConfigPtr first = source->load();
  CHECK(source->load() == first);
  CHECK(source->load() == first);
}

TEST_CASE("hot reload re-evaluates changed, added and removed files only") {
  TempDir workflows;
  write_text_file(workflows / "a.js", workflow_js("a"));
  write_text_file(workflows / "b.js", workflow_js("b"));
  auto source = make_js_workflow_source(options_for(workflows.path()));
  const WorkflowConfigPtr first = source->load();
  REQUIRE(ids_of(*first) == std::set<std::string>{"a", "b"});

  SECTION("a changed file is picked up and the other keeps its objects") {
    write_text_file(workflows / "b.js", workflow_js("b-renamed", "echo changed"));
    const WorkflowConfigPtr second = source->load();
    CHECK(second != first);
    CHECK(ids_of(*second) == std::set<std::string>{"a", "b-renamed"});
    // a.js was not evaluated again: its workflow is the cached one.
    CHECK(second->find("a")->service == first->find("a")->service);
  }
  SECTION("an added file is picked up") {
    write_text_file(workflows / "c.js", workflow_js("c"));
    const WorkflowConfigPtr second = source->load();
    CHECK(ids_of(*second) == std::set<std::string>{"a", "b", "c"});
    CHECK(second->find("b")->service == first->find("b")->service);
  }
  SECTION("a removed file takes its workflows with it") {
    std::remove((workflows / "a.js").c_str());
    const WorkflowConfigPtr second = source->load();
    CHECK(ids_of(*second) == std::set<std::string>{"b"});
  }
  SECTION("a file whose error was fixed loads") {
    write_text_file(workflows / "b.js", "throw 'broken';");
    CHECK(source->load()->errors.size() == 1);
    write_text_file(workflows / "b.js", workflow_js("b-fixed"));
    const WorkflowConfigPtr fixed = source->load();
    CHECK(fixed->errors.empty());
    CHECK(ids_of(*fixed) == std::set<std::string>{"a", "b-fixed"});
  }
  SECTION("clear_cache evaluates everything again") {
    source->clear_cache();
    const WorkflowConfigPtr second = source->load();
    CHECK(second != first);
    CHECK(ids_of(*second) == ids_of(*first));
    CHECK(second->find("a")->service != first->find("a")->service);
  }
}

TEST_CASE("a duplicate id resolves again when the earlier file goes away") {
  TempDir workflows;
  write_text_file(workflows / "a.js", workflow_js("same", "echo a"));
  write_text_file(workflows / "b.js", workflow_js("same", "echo b"));
  auto source = make_js_workflow_source(options_for(workflows.path()));
  const WorkflowConfigPtr first = source->load();
  REQUIRE(first->errors.size() == 1);
  CHECK(first->errors[0].file == "b.js");
  CHECK(first->find("same")->service->describe() == "command \"echo a\"");
  std::remove((workflows / "a.js").c_str());
  const WorkflowConfigPtr second = source->load();
  CHECK(second->errors.empty());
  CHECK(second->find("same")->service->describe() == "command \"echo b\"");
}

TEST_CASE("a change to a defaults file re-evaluates exactly the files that import it") {
  TempDir workflows, defaults;
  write_text_file(defaults / "common.js", "var COMMAND = 'echo one';\n");
  write_text_file(
      workflows / "importer.js",
      "importDefaults('common');\n"
      "celos.defineWorkflow({id: 'importer', schedule: celos.hourlySchedule(), "
      "schedulingStrategy: celos.serialSchedulingStrategy(), trigger: "
      "celos.alwaysTrigger(), externalService: celos.commandExternalService(COMMAND)});\n");
  write_text_file(workflows / "other.js", workflow_js("other"));
  auto source = make_js_workflow_source(options_for(workflows.path(), defaults.path()));
  const WorkflowConfigPtr first = source->load();
  REQUIRE(first->errors.empty());
  CHECK(first->find("importer")->service->describe() == "command \"echo one\"");

  write_text_file(defaults / "common.js", "var COMMAND = 'echo two, longer';\n");
  const WorkflowConfigPtr second = source->load();
  CHECK(second->find("importer")->service->describe() == "command \"echo two, longer\"");
  CHECK(second->find("other")->service == first->find("other")->service);
  CHECK(source->load() == second);
}

TEST_CASE("a defaults file created after a failed import is picked up") {
  TempDir workflows, defaults;
  write_text_file(workflows / "a.js", "importDefaults('late');\n" + workflow_js("a"));
  auto source = make_js_workflow_source(options_for(workflows.path(), defaults.path()));
  CHECK(source->load()->errors.size() == 1);
  write_text_file(defaults / "late.js", "var LATE = true;\n");
  const WorkflowConfigPtr config = source->load();
  CHECK(config->errors.empty());
  CHECK(ids_of(*config) == std::set<std::string>{"a"});
}

TEST_CASE("1,000 unchanged files are not evaluated again, and one change evaluates one file") {
  TempDir workflows;
  for (int i = 0; i < 1000; ++i) {
    write_text_file(workflows / fmt::format("wf-{:04}.js", i),
                    workflow_js(fmt::format("wf-{:04}", i)));
  }
  auto source = make_js_workflow_source(options_for(workflows.path()));
  const WorkflowConfigPtr first = source->load();
  REQUIRE(first->workflows.size() == 1000);
  CHECK(source->load() == first);

  write_text_file(workflows / "wf-0500.js", workflow_js("wf-0500", "echo changed"));
  const WorkflowConfigPtr second = source->load();
  REQUIRE(second->workflows.size() == 1000);
  int reevaluated = 0;
  for (const auto& [id, workflow] : second->workflows) {
    if (workflow.service != first->find(id)->service) ++reevaluated;
  }
  CHECK(reevaluated == 1);
  CHECK(second->find("wf-0500")->service->describe() == "command \"echo changed\"");
}

TEST_CASE("an oozie properties function is called with the slot at submit time") {
  TempDir workflows;
  write_text_file(workflows / "a.js",
                  "var CELOS_DEFAULT_OOZIE = 'http://oozie:11000/oozie';\n"
                  "var CELOS_DEFAULT_OOZIE_PROPERTIES = {queue: 'default', inputPath: 'x'};\n"
                  "var calls = 0;\n"
                  "celos.defineWorkflow({id: 'props', schedule: celos.hourlySchedule(), "
                  "schedulingStrategy: celos.serialSchedulingStrategy(), trigger: "
                  "celos.alwaysTrigger(), externalService: celos.oozieExternalService("
                  "function(slot) { calls++; return {inputPath: '/in/${year}/' + slot.workflowId, "
                  "slotTime: slot.time, hour: slot.hour, calls: calls}; })});\n");
  auto http = std::make_shared<testing::FakeHttpClient>();
  http->on([](const HttpRequest& request) -> std::optional<Result<HttpResponse>> {
    if (request.method == "POST") return HttpResponse{201, {}, R"({"id":"job-1"})"};
    return std::nullopt;
  });
  auto options = options_for(workflows.path());
  options.http = http;
  auto source = make_js_workflow_source(options);
  const WorkflowConfigPtr config = source->load();
  REQUIRE(config->errors.empty());
  const ExternalServicePtr service = config->find("props")->service;
  for (int call = 1; call <= 2; ++call) {
    auto id = service->submit(SlotId{"props", make_time(2015, 9, 13, 13)});
    REQUIRE(id);
    CHECK(*id == "job-1");
    REQUIRE(http->requests.size() == static_cast<std::size_t>(call));
    const std::string& body = http->requests.back().body;
    CHECK_THAT(body, Catch::Contains("<name>inputPath</name><value>/in/2015/props</value>"));
    CHECK_THAT(body, Catch::Contains("<name>queue</name><value>default</value>"));
    CHECK_THAT(body,
               Catch::Contains("<name>slotTime</name><value>2015-09-13T13:00:00.000Z</value>"));
    CHECK_THAT(body, Catch::Contains(fmt::format("<name>calls</name><value>{}</value>", call)));
  }
}

TEST_CASE("a properties function that fails or runs away fails the submit, not the load") {
  TempDir workflows;
  write_text_file(workflows / "a.js",
                  "function define(id, f) { celos.defineWorkflow({id: id, schedule: "
                  "celos.hourlySchedule(), schedulingStrategy: celos.serialSchedulingStrategy(), "
                  "trigger: celos.alwaysTrigger(), externalService: "
                  "celos.oozieExternalService(f, 'http://oozie:11000/oozie')}); }\n"
                  "define('throws', function(slot) { throw new Error('no properties'); });\n"
                  "define('loops', function(slot) { while (true) {} });\n"
                  "define('bad-result', function(slot) { return 'x'; });\n"
                  "define('defines', function(slot) { celos.defineWorkflow({}); });\n");
  auto options = options_for(workflows.path());
  options.http = std::make_shared<testing::FakeHttpClient>();
  options.max_eval_time = std::chrono::milliseconds(200);
  auto source = make_js_workflow_source(options);
  const WorkflowConfigPtr config = source->load();
  REQUIRE(config->errors.empty());
  const auto submit_error = [&](const std::string& id) {
    auto submitted = config->find(id)->service->submit(SlotId{id, make_time(2015, 9, 13, 13)});
    REQUIRE_FALSE(submitted);
    return submitted.error().message;
  };
  CHECK_THAT(submit_error("throws"), Catch::Contains("no properties"));
  CHECK_THAT(submit_error("loops"), Catch::Contains("did not return within 200 ms"));
  CHECK_THAT(submit_error("bad-result"), Catch::Contains("must be an object"));
  CHECK_THAT(submit_error("defines"),
             Catch::Contains("only allowed while the workflow file is evaluated"));
}

}  // namespace
}  // namespace celos

namespace celos {
namespace {

std::string oozie_workflow(const std::string& id, const std::string& prelude) {
  return prelude + "celos.defineWorkflow({id: '" + id +
         "', schedule: celos.hourlySchedule(), "
         "schedulingStrategy: celos.serialSchedulingStrategy(), trigger: celos.alwaysTrigger(), "
         "externalService: celos.oozieExternalService(function (slot) { return {n: big.length}; },"
         " 'http://oozie'), startTime: '2015-01-01T00:00Z'});\n";
}

TEST_CASE(
    "loading all files is bounded in time: files past the total budget wait for the next load") {
  TempDir dir;
  write_text_file(dir / "a.js", "while (true) {}\n");
  write_text_file(dir / "b.js", oozie_workflow("b", "var big = [];\n"));
  write_text_file(dir / "c.js", oozie_workflow("c", "var big = [];\n"));
  auto options = options_for(dir.path());
  options.max_eval_time = std::chrono::milliseconds(5000);
  options.max_total_eval_time = std::chrono::milliseconds(300);
  auto source = make_js_workflow_source(options);
  auto first = source->load();
  REQUIRE(loader_error_in(*first, "a.js"));
  CHECK_THAT(loader_error_in(*first, "a.js")->message, Catch::Contains("300 ms"));
  for (const char* file : {"b.js", "c.js"}) {
    REQUIRE(loader_error_in(*first, file));
    CHECK_THAT(loader_error_in(*first, file)->message,
               Catch::Contains("total time budget of 300 ms"));
  }
  CHECK(first->workflows.empty());
  // a.js is not evaluated again (unchanged): the others get their turn.
  auto second = source->load();
  CHECK(ids_of(*second) == std::set<std::string>{"b", "c"});
  CHECK(loader_error_in(*second, "b.js") == nullptr);
  CHECK(loader_error_in(*second, "a.js") != nullptr);
}

// Options under which every file's Oozie service keeps its heap alive (so kept heaps count
// against the total), with the given per-file and total heap bounds.
WorkflowLoaderOptions heap_keeping_options(const std::string& dir, std::size_t per_file,
                                           std::size_t total) {
  auto options = options_for(dir);
  options.max_eval_time = std::chrono::milliseconds(5000);
  options.http = std::make_shared<testing::FakeHttpClient>();
  options.max_heap_bytes = per_file;
  options.max_total_heap_bytes = total;
  return options;
}

TEST_CASE("loading all files is bounded in memory across the heaps that stay alive") {
  TempDir dir;
  // A 2 MiB string kept alive by the properties function of each file (between 5 and 6 MiB at
  // the peak of its making): the first file fits in 6.5 MiB, the second no longer does.
  const std::string prelude = "var big = 'x'; while (big.length < 2000000) big = big + big;\n";
  write_text_file(dir / "a.js", oozie_workflow("a", prelude));
  write_text_file(dir / "b.js", oozie_workflow("b", prelude));
  auto options = heap_keeping_options(dir.path(), 16 * 1024 * 1024, 26 * 256 * 1024);
  auto config = make_js_workflow_source(options)->load();
  CHECK(ids_of(*config) == std::set<std::string>{"a"});
  REQUIRE(loader_error_in(*config, "b.js"));
  CHECK_THAT(loader_error_in(*config, "b.js")->message, Catch::Contains("bytes"));
}

TEST_CASE("many files are evaluated on several threads with the same results as one at a time") {
  TempDir dir;
  for (int i = 0; i < 150; ++i) {
    const std::string id = fmt::format("wf{:03}", i);
    write_text_file(dir / (id + ".js"),
                    i % 50 == 7 ? std::string("celos.defineWorkflow(;\n") : oozie_workflow(id, ""));
  }
  write_text_file(dir / "zz-duplicate.js", oozie_workflow("wf001", ""));
  auto config = make_js_workflow_source(options_for(dir.path()))->load();
  CHECK(config->workflows.size() == 147);
  for (int i : {7, 57, 107}) {
    const std::string file = fmt::format("wf{:03}.js", i);
    REQUIRE(loader_error_in(*config, file));
    CHECK(config->find(fmt::format("wf{:03}", i)) == nullptr);
  }
  REQUIRE(loader_error_in(*config, "zz-duplicate.js"));  // duplicates resolve in file name order
  CHECK(config->find("wf001")->file == "wf001.js");
}

TEST_CASE("many files on several threads stay within the total memory of the kept heaps") {
  TempDir dir;
  const std::string prelude = "var big = 'x'; while (big.length < 1000000) big = big + big;\n";
  for (int i = 0; i < 80; ++i) {
    write_text_file(dir / fmt::format("f{:02}.js", i),
                    oozie_workflow(fmt::format("f{:02}", i), prelude));
  }
  auto options = heap_keeping_options(dir.path(), 8 * 1024 * 1024, 24 * 1024 * 1024);
  auto config = make_js_workflow_source(options)->load();
  // Each kept heap holds at least the 1 MiB string: fewer than 24 files fit, some do.
  CHECK(config->workflows.size() >= 4);
  CHECK(config->workflows.size() < 24);
  // The others ran out of what the kept heaps left them, or were not evaluated at all.
  CHECK_FALSE(config->errors.empty());
  for (const LoadError& e : config->errors) {
    INFO(e.file << ": " << e.message);
    CHECK((e.message.find("bytes of memory") != std::string::npos ||
           e.message.find("bytes allowed for all files together") != std::string::npos));
  }
  CHECK(config->workflows.size() + config->errors.size() == 80);
}

}  // namespace
}  // namespace celos
