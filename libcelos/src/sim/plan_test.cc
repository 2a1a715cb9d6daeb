// celos plan: the slots and definitions a new version of a workflow set changes.
#include <sstream>

#include <catch2/catch.hpp>

#include "celos/simulate.h"
#include "sim/world.h"
#include "testing/source_dir.h"
#include "testing/temp_dir.h"

namespace {

using namespace celos;
using celos::testing::read_text_file;
using celos::testing::TempDir;
using celos::testing::write_text_file;

const std::map<std::string, std::string> kQuickstart = {{"@CELOS_HOME@", "/celos"},
                                                        {"@START_TIME@", "2015-09-01T00:00Z"}};

// The quickstart sample, as deployed, in dir/name.
void copy_quickstart(const TempDir& dir, const std::string& name) {
  const std::string sample = ::celos::testing::source_dir() + "/samples/quickstart/local";
  for (const char* part : {"workflows", "defaults"}) {
    REQUIRE(sim::copy_tree(sample + "/" + part, dir / (name + "/" + part), kQuickstart));
  }
}

struct Planned {
  std::ostringstream out, err;
  Result<bool> changed = false;
  Planned(const TempDir& dir, bool json) {
    PlanOptions options{dir / "old", dir / "new", make_time(2015, 9, 13), 7, json};
    changed = plan(options, out, err);
  }
};

TEST_CASE(
    "A plan of the quickstart with one workflow's schedule changed shows exactly its "
    "slots moved") {
  TempDir dir;
  copy_quickstart(dir, "old");
  copy_quickstart(dir, "new");
  const std::string file = dir / "new/workflows/wordcount.js";
  std::string text = read_text_file(file);
  const std::string hourly = "\"schedule\": celos.hourlySchedule(),";
  REQUIRE(text.find(hourly) != std::string::npos);
  text.replace(text.find(hourly), hourly.size(),
               "\"schedule\": dc == \"nyc\" ? celos.cronSchedule(\"0 30 * * * ?\") "
               ": celos.hourlySchedule(),");
  write_text_file(file, text);

  Planned json(dir, true);
  REQUIRE(json.changed);
  CHECK(*json.changed);
  const std::string out = json.out.str();
  CHECK(out.find(R"("added":[],"removed":[],"moved":[{"workflow":"wordcount-nyc",)"
                 R"("from":"2015-09-13T00:00:00.000Z","to":"2015-09-13T00:30:00.000Z"})") !=
        std::string::npos);
  std::size_t moved = 0;
  for (std::size_t at = out.find("\"from\":"); at != std::string::npos;
       at = out.find("\"from\":", at + 1)) {
    ++moved;
  }
  CHECK(moved == 7 * 24);  // every slot of the week, and only wordcount-nyc's
  CHECK(out.find("wordcount-lax") == std::string::npos);
  CHECK(out.find("wordcount-total") == std::string::npos);
  CHECK(out.find(R"("changed":[{"workflow":"wordcount-nyc","changes":["schedule: )") !=
        std::string::npos);
  CHECK(json.err.str().empty());

  Planned text_plan(dir, false);
  CHECK(text_plan.out.str().rfind("plan for 2015-09-13T00:00:00.000Z .. 2015-09-20T00:00:00.000Z: "
                                  "0 slots added, 0 removed, 168 moved;",
                                  0) == 0);
  CHECK(text_plan.out.str().find("  moved 2015-09-13T00:00:00.000Z -> 2015-09-13T00:30:00.000Z") !=
        std::string::npos);
}

TEST_CASE("A plan names added and removed workflows, and triggers and services that changed") {
  TempDir dir;
  copy_quickstart(dir, "old");
  copy_quickstart(dir, "new");
  std::string total = read_text_file(dir / "new/workflows/wordcount-total.js");
  total.replace(total.find("\"wordcount-total\""), 17, "\"wordcount-sum\"");
  write_text_file(dir / "new/workflows/wordcount-total.js", total);
  std::string wc = read_text_file(dir / "new/workflows/wordcount.js");
  wc.replace(wc.find("/_READY"), 7, "/_DONE");
  write_text_file(dir / "new/workflows/wordcount.js", wc);

  Planned text(dir, false);
  REQUIRE(text.changed);
  const std::string out = text.out.str();
  CHECK(
      out.find("168 slots added, 168 removed, 0 moved; 1 workflows added, 1 removed, 2 changed") !=
      std::string::npos);
  CHECK(out.find("added workflow wordcount-sum\nremoved workflow wordcount-total\n") !=
        std::string::npos);
  CHECK(out.find("changed wordcount-nyc\n  trigger: HDFSCheckTrigger") != std::string::npos);
  CHECK(out.find("_DONE is not ready") != std::string::npos);
}

TEST_CASE(
    "A plan of two equal versions changes nothing, a version without workflows/ is an "
    "error") {
  TempDir dir;
  copy_quickstart(dir, "old");
  copy_quickstart(dir, "new");
  Planned same(dir, false);
  REQUIRE(same.changed);
  CHECK_FALSE(*same.changed);
  std::ostringstream out, err;
  auto missing = plan({dir / "old", dir / "nowhere", make_time(2015, 9, 13)}, out, err);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kInvalid);
  CHECK(missing.error().message.find("nowhere: no workflows/ directory") != std::string::npos);
}

}  // namespace
