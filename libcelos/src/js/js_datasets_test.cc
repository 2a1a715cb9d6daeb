// celos.dataset, inputs/outputs and statusTrigger through the real loader over temporary
// directories: the load errors of SPEC §16 "Datasets" name the file that made them.
#include <catch2/catch.hpp>

#include "celos/workflow_loader.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

using testing::TempDir;
using testing::write_text_file;

struct Dirs {
  TempDir dir;
  std::string workflows = dir.path() + "/workflows";
  std::string defaults = dir.path() + "/defaults";

  void file(const std::string& name, const std::string& text) {
    write_text_file(workflows + "/" + name, text);
  }
  void defaults_file(const std::string& name, const std::string& text) {
    write_text_file(defaults + "/" + name, text);
  }
  WorkflowConfigPtr load() {
    WorkflowLoaderOptions options;
    options.workflows_dir = workflows;
    options.defaults_dir = defaults;
    options.db_dir = dir.path() + "/db";
    return make_js_workflow_source(options)->load();
  }
};

// A workflow with the given extra fields (and an always trigger unless `trigger` is empty).
std::string dataset_workflow(const std::string& id, const std::string& fields,
                             const std::string& trigger = "celos.alwaysTrigger()") {
  return "celos.defineWorkflow({id: '" + id +
         "', schedule: celos.hourlySchedule(), schedulingStrategy: "
         "celos.serialSchedulingStrategy(), " +
         (trigger.empty() ? "" : "trigger: " + trigger + ", ") +
         "externalService: celos.commandExternalService('true'), " + fields + "});\n";
}

const LoadError* error_in(const WorkflowConfig& config, const std::string& file) {
  for (const LoadError& e : config.errors) {
    if (e.file == file) return &e;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("datasets from a shared defaults file connect a producer and a consumer") {
  Dirs d;
  d.defaults_file("data.js",
                  "var CLICKS = celos.dataset('clicks', {path: '/data/clicks/${year}${month}${day}/"
                  "${hour}00'});\n");
  d.file("a.js", "importDefaults('data');\n" + dataset_workflow("import", "outputs: [CLICKS]"));
  d.file("b.js",
         "importDefaults('data');\n" +
             dataset_workflow("report", "inputs: [{dataset: 'clicks', offset: -3600}]", ""));
  auto config = d.load();
  REQUIRE(config->errors.empty());
  REQUIRE(config->datasets.count("clicks"));
  CHECK(config->datasets.at("clicks").done_flag == "_SUCCESS");
  const Workflow* report = config->find("report");
  REQUIRE(report);
  REQUIRE(report->inputs.size() == 1);
  CHECK(report->inputs[0].offset == -3600);
  REQUIRE(report->trigger);  // derived
  CHECK(config->producer_of("clicks")->id == "import");
  CHECK(config->consumers_of("clicks").size() == 1);
  CHECK(config->find("import")->atomic_outputs);
}

TEST_CASE("dataset load errors name the file that made them") {
  Dirs d;
  d.file("a.js", "celos.dataset('x', {path: '/x/${year}${month}${day}${hour}'});\n" +
                     dataset_workflow("a", "outputs: ['x']"));
  d.file("b.js", "celos.dataset('x', {path: '/other/${hour}'});\n" +
                     dataset_workflow("b", "inputs: ['x']", ""));
  d.file("c.js", dataset_workflow("c", "inputs: ['unknown']", ""));
  d.file("d.js", dataset_workflow("d", "outputs: ['x']"));
  d.file("e.js", dataset_workflow("e", "inputs: [{dataset: 'x', minInstances: 2}]"));
  d.file("f.js", dataset_workflow("f", "url: 'u'", ""));
  d.file("g.js", "celos.dataset('../x', {path: '/x'});\n");
  d.file("h.js", "celos.statusTrigger('x', []);\n");
  d.file("i.js", "celos.statusTrigger('x', ['DONE']);\n");
  d.file("j.js", dataset_workflow("j", "inputs: ['x'], atomicOutputs: 'yes'"));
  auto config = d.load();
  for (const auto& [id, _] : config->workflows) UNSCOPED_INFO("loaded " << id);
  for (const auto& e : config->errors) UNSCOPED_INFO(e.file << ": " << e.message);
  CHECK(config->workflows.size() == 1);
  CHECK(config->find("a"));
  CHECK_THAT(error_in(*config, "b.js")->message, Catch::Contains("declared differently in a.js"));
  CHECK(error_in(*config, "b.js")->line == 1);
  CHECK_THAT(error_in(*config, "c.js")->message, Catch::Contains("unknown dataset \"unknown\""));
  CHECK_THAT(error_in(*config, "d.js")->message, Catch::Contains("at most one producer"));
  CHECK_THAT(error_in(*config, "e.js")->message,
             Catch::Contains("minInstances is only allowed with mode \"new\""));
  CHECK_THAT(error_in(*config, "f.js")->message, Catch::Contains("field \"trigger\" is required"));
  CHECK_THAT(error_in(*config, "g.js")->message, Catch::Contains("invalid dataset id"));
  CHECK_THAT(error_in(*config, "h.js")->message, Catch::Contains("non-empty array"));
  CHECK_THAT(error_in(*config, "i.js")->message, Catch::Contains("unknown status \"DONE\""));
  CHECK_THAT(error_in(*config, "j.js")->message,
             Catch::Contains("atomicOutputs\" must be a boolean"));
}

TEST_CASE("declaring the same dataset again in one file changes nothing, differently throws") {
  Dirs d;
  d.file("a.js",
         "var a = celos.dataset('x', {path: '/x/${hour}', doneFlag: '_DONE'});\n"
         "var b = celos.dataset('x', {path: '/x/${hour}', doneFlag: '_DONE'});\n"
         "if (a.doneFlag !== '_DONE' || b.id !== 'x') throw 'bad object';\n"
         "celos.dataset('x', {path: '/x/${hour}'});\n");
  auto config = d.load();
  REQUIRE(config->errors.size() == 1);
  CHECK(config->errors[0].line == 4);
  CHECK_THAT(config->errors[0].message, Catch::Contains("already declared differently (line 1)"));
  CHECK(config->datasets.at("x").done_flag == "_DONE");
}

TEST_CASE("an explicit trigger alone decides, statusTrigger and mode new are read") {
  Dirs d;
  d.file("a.js", "celos.dataset('x', {path: '/x/${day}/${hour}', fs: 'file:///'});\n" +
                     dataset_workflow("w",
                                      "inputs: [{dataset: 'x', mode: 'new', minInstances: 3}], "
                                      "atomicOutputs: false",
                                      "celos.statusTrigger('other', ['FAILURE', 'WAIT_TIMEOUT'])"));
  auto config = d.load();
  REQUIRE(config->errors.empty());
  const Workflow* w = config->find("w");
  REQUIRE(w);
  CHECK(w->inputs[0].mode == InputMode::kNew);
  CHECK(w->inputs[0].min_instances == 3);
  CHECK_FALSE(w->atomic_outputs);
  CHECK(config->datasets.at("x").fs == "file:///");
}

}  // namespace celos
