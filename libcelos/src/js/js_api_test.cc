// Every function of the celos.* API, evaluated in a heap of its own as a workflow file would be.
#include "js/js_api.h"

#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "celos/command_service.h"
#include "js/js_api_test_util.h"
#include "testing/fakes.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

using namespace js_test;

const Time kJsApiSlot = make_time(2015, 9, 13, 13, 0, 0);

// ---- defineWorkflow ------------------------------------------------------------------------

TEST_CASE("defineWorkflow with only the required fields gets the documented defaults") {
  const Workflow& workflow = only_workflow(eval(define("")));
  CHECK(workflow.id == "wf");
  CHECK(workflow.start_time == make_time(1970, 1, 1));
  CHECK(workflow.max_retry_count == 0);
  CHECK(workflow.wait_timeout_seconds == 2147483647);
  CHECK_FALSE(workflow.url.has_value());
  CHECK(workflow.contacts.empty());
  CHECK(workflow.file == "test.js");
  CHECK(workflow.schedule->describe() == "cronSchedule(0 0 * * * ?)");
  CHECK(workflow.strategy->describe() == "serialSchedulingStrategy(1)");
  CHECK(workflow.service->describe() == "command \"true\"");
}

TEST_CASE("defineWorkflow reads every optional field") {
  const Workflow& workflow = only_workflow(eval(define(
      "startTime: '2015-09-01T00:00Z', maxRetryCount: 3, waitTimeoutSeconds: 3600, "
      "url: 'http://wiki/wf', contacts: [{name: 'Ann', email: 'ann@example.com'}, {name: 'Bo'}]")));
  CHECK(workflow.start_time == make_time(2015, 9, 1));
  CHECK(workflow.max_retry_count == 3);
  CHECK(workflow.wait_timeout_seconds == 3600);
  CHECK(workflow.url == "http://wiki/wf");
  REQUIRE(workflow.contacts.size() == 2);
  CHECK(workflow.contacts[0].name == "Ann");
  CHECK(workflow.contacts[0].email == "ann@example.com");
  CHECK(workflow.contacts[1].name == "Bo");
  CHECK(workflow.contacts[1].email.empty());
}

TEST_CASE("addWorkflow is an alias of defineWorkflow and names itself in errors") {
  CHECK(only_workflow(eval(define("", "addWorkflow"))).id == "wf");
  CHECK_THAT(error_of(define("maxRetryCount: 'x'", "addWorkflow")),
             Catch::Contains("celos.addWorkflow: field \"maxRetryCount\" must be a number"));
}

TEST_CASE("defineWorkflow rejects bad fields with a message naming the function and field") {
  using Case = std::pair<std::string, std::string>;
  const Case c = GENERATE(
      Case{"celos.defineWorkflow('wf');",
           "celos.defineWorkflow: argument options must be an object"},
      Case{"celos.defineWorkflow({schedule: celos.hourlySchedule()});",
           "celos.defineWorkflow: field \"id\" is required"},
      Case{define("id: 42"), "celos.defineWorkflow: field \"id\" must be a string"},
      Case{define("id: 'a/b'"), "celos.defineWorkflow: field \"id\""},
      Case{define("id: '   '"), "celos.defineWorkflow: field \"id\""},
      Case{define("id: '..'"), "celos.defineWorkflow: field \"id\""},
      Case{define("schedule: undefined"), "celos.defineWorkflow: field \"schedule\" is required"},
      Case{define("schedule: {}"),
           "field \"schedule\" must be a schedule made by celos.*Schedule(), got a plain object"},
      Case{define("schedule: celos.alwaysTrigger()"),
           "field \"schedule\" must be a schedule made by celos.*Schedule(), got a trigger"},
      Case{define("schedulingStrategy: 1"),
           "field \"schedulingStrategy\" must be a scheduling strategy"},
      Case{define("trigger: celos.hourlySchedule()"),
           "field \"trigger\" must be a trigger made by celos.*Trigger(), got a schedule"},
      Case{define("externalService: 'sh'"),
           "field \"externalService\" must be an external service"},
      Case{define("startTime: '2015-09-01T00:00'"), "celos.defineWorkflow: field \"startTime\""},
      Case{define("startTime: 5"), "field \"startTime\" must be a string"},
      Case{define("maxRetryCount: '3'"), "field \"maxRetryCount\" must be a number, got a string"},
      Case{define("maxRetryCount: -1"), "field \"maxRetryCount\" must be an integer >= 0"},
      Case{define("maxRetryCount: 1.5"), "field \"maxRetryCount\" must be an integer >= 0"},
      Case{define("waitTimeoutSeconds: 'soon'"), "field \"waitTimeoutSeconds\" must be a number"},
      Case{define("url: 5"), "field \"url\" must be a string"},
      Case{define("contacts: 'ann'"), "field \"contacts\" must be an array"},
      Case{define("contacts: [{name: 5}]"), "field \"contacts\"[0].name must be a string"},
      Case{define("trigers: celos.alwaysTrigger()"),
           "celos.defineWorkflow: unknown field \"trigers\""});
  INFO(c.first);
  CHECK_THAT(error_of(c.first), Catch::Contains(c.second));
}

TEST_CASE("a duplicate id in the same file is an error of the later definition") {
  const FileEvaluation result = eval(define("") + "\n\n" + define(""));
  REQUIRE(result.workflows.size() == 1);
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].line == 4);
  CHECK_THAT(result.errors[0].message,
             Catch::Contains("duplicate workflow id \"wf\" (already defined on line 1)"));
}

TEST_CASE("load errors carry the line of the workflow file where they happened") {
  SECTION("a bad argument to a celos function") {
    const FileEvaluation result = eval("var a = 1;\n\nvar s = celos.cronSchedule(5);\n");
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].line == 3);
  }
  SECTION("a throw in a helper function reports the throw") {
    const FileEvaluation result = eval("function f() {\n  throw new Error('boom');\n}\n\nf();\n");
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].line == 2);
    CHECK_THAT(result.errors[0].message, Catch::Contains("Error: boom"));
  }
  SECTION("a thrown string") {
    const FileEvaluation result = eval("\nthrow 'plain';\n");
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].line == 2);
    CHECK(result.errors[0].message == "uncaught exception: plain");
  }
  SECTION("a syntax error") {
    const FileEvaluation result = eval("var a = 1;\nvar b = ;\n");
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].line == 2);
    CHECK_THAT(result.errors[0].message, Catch::Contains("SyntaxError"));
  }
  SECTION("a defineWorkflow call keeps its line") {
    const FileEvaluation result = eval("\n\n" + define(""));
    REQUIRE(result.lines.size() == 1);
    CHECK(result.lines[0] == 3);
  }
}

TEST_CASE("workflows defined before an error in the same file stay defined") {
  const FileEvaluation result =
      eval(define("id: 'first'") + "null.boom;\n" + define("id: 'never'"));
  REQUIRE(result.workflows.size() == 1);
  CHECK(result.workflows[0].id == "first");
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].line == 2);
}

// ---- external services --------------------------------------------------------------------

TEST_CASE("commandExternalService runs the command with its options") {
  testing::TempDir db;
  testing::TempDir work;
  EvalSettings settings;
  settings.db_dir = db.path();
  const Workflow& workflow = only_workflow(
      eval(define("externalService: celos.commandExternalService('echo $GREETING ${year} > out', "
                  "{env: {GREETING: 'hi'}, cwd: '" +
                  work.path() + "',})"),
           settings));
  const SlotId slot{"wf", kJsApiSlot};
  auto id = workflow.service->submit(slot);
  REQUIRE(id);
  REQUIRE(workflow.service->start(slot, *id));
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    auto status = workflow.service->status(slot, *id);
    REQUIRE(status);
    if (*status != ExternalStatus::kRunning) {
      CHECK(*status == ExternalStatus::kSuccess);
      break;
    }
    REQUIRE(std::chrono::steady_clock::now() < give_up);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(testing::read_text_file(work / "out") == "hi 2015\n");
}

TEST_CASE("commandExternalService validates its arguments") {
  CHECK_THAT(error_of("celos.commandExternalService();"),
             Catch::Contains("celos.commandExternalService: argument command must be a string"));
  CHECK_THAT(error_of("celos.commandExternalService('  ');"),
             Catch::Contains("celos.commandExternalService: argument command must not be empty"));
  CHECK_THAT(error_of("celos.commandExternalService('true', 'x');"),
             Catch::Contains("celos.commandExternalService: argument options must be an object"));
  CHECK_THAT(error_of("celos.commandExternalService('true', {cdw: '/'});"),
             Catch::Contains("celos.commandExternalService: unknown option \"cdw\""));
  CHECK_THAT(error_of("celos.commandExternalService('true', {env: {A: {}}});"),
             Catch::Contains("property \"A\" must be a string"));
  CHECK_THAT(error_of("celos.commandExternalService('true', {cwd: 1});"),
             Catch::Contains("options.cwd must be a string"));
}

TEST_CASE("oozieExternalService never fails at load time, only at submit time") {
  SECTION("without a URL") {
    const Workflow& workflow = only_workflow(eval(define(
        "externalService: celos.oozieExternalService({'oozie.wf.application.path': '/wf'})")));
    auto submitted = workflow.service->submit(SlotId{"wf", kJsApiSlot});
    REQUIRE_FALSE(submitted);
    CHECK_THAT(submitted.error().message, Catch::Contains("no Oozie URL"));
  }
  SECTION("without an HTTP client") {
    const Workflow& workflow = only_workflow(eval(
        define("externalService: celos.oozieExternalService({}, 'http://oozie:11000/oozie')")));
    auto submitted = workflow.service->submit(SlotId{"wf", kJsApiSlot});
    REQUIRE_FALSE(submitted);
    CHECK_THAT(submitted.error().message, Catch::Contains("not available"));
  }
}

TEST_CASE("oozieExternalService validates its arguments") {
  CHECK_THAT(
      error_of("celos.oozieExternalService('x');"),
      Catch::Contains(
          "celos.oozieExternalService: argument properties must be an object, got a string"));
  CHECK_THAT(
      error_of("celos.oozieExternalService({a: {}});"),
      Catch::Contains(
          "celos.oozieExternalService: argument properties: property \"a\" must be a string"));
  CHECK_THAT(error_of("celos.oozieExternalService({}, 5);"),
             Catch::Contains("celos.oozieExternalService: argument oozieUrl must be a string"));
  CHECK_THAT(error_of("var CELOS_DEFAULT_OOZIE_PROPERTIES = 'x';\ncelos.oozieExternalService({});"),
             Catch::Contains("CELOS_DEFAULT_OOZIE_PROPERTIES must be an object"));
}

// ---- helpers -------------------------------------------------------------------------------

TEST_CASE("replaceTimeVariables replaces the zero-padded fields of a time") {
  CHECK(js_value(
            "celos.replaceTimeVariables('/in/${year}-${month}-${day}/${hour}${minute}${second}', "
            "'2015-09-03T04:05:06Z')") == "\"/in/2015-09-03/040506\"");
  CHECK(js_value("celos.replaceTimeVariables('${year}', {time: '2016-01-01T00:00:00.000Z'})") ==
        "\"2016\"");
  CHECK_THAT(error_of("celos.replaceTimeVariables('x', '2015-09-03T04:05');"),
             Catch::Contains("celos.replaceTimeVariables: argument time"));
  CHECK_THAT(error_of("celos.replaceTimeVariables(1, '2015-09-03T04:05Z');"),
             Catch::Contains("celos.replaceTimeVariables: argument string must be a string"));
}

TEST_CASE("mergeProperties copies the source's properties into the target and returns it") {
  CHECK(js_value("celos.mergeProperties({a: '1', c: '3'}, {a: '0', b: '2'})") ==
        "{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"}");
  CHECK(js_value("(function() { var t = {}; celos.mergeProperties({x: 1}, t); return t; })()") ==
        "{\"x\":1}");
  CHECK_THAT(error_of("celos.mergeProperties({}, 'x');"),
             Catch::Contains("celos.mergeProperties: argument target must be an object"));
}

TEST_CASE("importDefaults is also a global function and checks its argument") {
  CHECK(js_value("typeof importDefaults") == "\"function\"");
  CHECK_THAT(error_of("celos.importDefaults('../etc/passwd');"),
             Catch::Contains("celos.importDefaults: argument name \"../etc/passwd\""));
  CHECK_THAT(
      error_of("importDefaults('common');"),
      Catch::Contains("celos.importDefaults: cannot import \"common\": no defaults directory"));
  CHECK_THAT(error_of("importDefaults(3);"),
             Catch::Contains("celos.importDefaults: argument name must be a string"));
}

// ---- runaway files -------------------------------------------------------------------------

TEST_CASE("an endless loop is stopped by the time budget and reported as the file's error") {
  EvalSettings settings;
  settings.max_eval_time = std::chrono::milliseconds(200);
  SECTION("a plain loop") {
    CHECK_THAT(error_of("\nwhile (true) {}\n", settings),
               Catch::Contains("did not finish within 200 ms"));
  }
  SECTION("a loop that catches every error") {
    CHECK_THAT(error_of("while (true) { try { while (true) {} } catch (e) {} }", settings),
               Catch::Contains("did not finish within 200 ms"));
  }
}

TEST_CASE("a huge allocation is refused by the memory budget and reported as the file's error") {
  EvalSettings settings;
  settings.max_heap_bytes = 8 * 1024 * 1024;
  SECTION("a string that doubles") {
    CHECK_THAT(error_of("var s = 'x';\nwhile (true) { s = s + s; }\n", settings),
               Catch::Contains("more than 8388608 bytes"));
  }
  SECTION("an array that grows") {
    CHECK_THAT(error_of("var a = [];\nfor (var i = 0; ; i++) { a.push({n: i}); }\n", settings),
               Catch::Contains("more than 8388608 bytes"));
  }
}

namespace celos {
namespace {

// Duktape keeps characters outside the BMP as CESU-8; what leaves it must be UTF-8 (issue 11).
TEST_CASE("an emoji in a workflow's url, contacts and command env leaves the JS as UTF-8") {
  const std::string emoji = "\xF0\x9F\x98\x80";  // U+1F600
  const Workflow workflow = only_workflow(
      eval("celos.defineWorkflow({id: 'wf', schedule: celos.hourlySchedule(), "
           "schedulingStrategy: celos.serialSchedulingStrategy(), trigger: celos.alwaysTrigger(), "
           "externalService: celos.commandExternalService('true', {env: {E: '\\uD83D\\uDE00'}}), "
           "url: 'http://wiki/\\uD83D\\uDE00', "
           "contacts: [{name: 'Ann " +
           emoji + "', email: 'a\\uD83D\\uDE00@x'}]});\n"));
  CHECK(workflow.url == "http://wiki/" + emoji);
  REQUIRE(workflow.contacts.size() == 1);
  CHECK(workflow.contacts[0].name == "Ann " + emoji);
  CHECK(workflow.contacts[0].email == "a" + emoji + "@x");
}

TEST_CASE("a load error that quotes an emoji is UTF-8") {
  const std::string message = error_of("throw 'bad \\uD83D\\uDE00 and \\uD83D alone';");
  CHECK_THAT(message, Catch::Contains("bad \xF0\x9F\x98\x80 and \xEF\xBF\xBD alone"));
}

}  // namespace
}  // namespace celos

}  // namespace
}  // namespace celos
