// Deploy stories against in-memory file systems. The "fail at operation n" loops make every
// change a deploy makes fail in turn and check that the previous deployment is what remains.
#include "celos/deploy.h"

#include <map>

#include <catch2/catch.hpp>

#include "celos/file_system_wrapper.h"
#include "testing/fakes.h"

namespace celos {
namespace {

using testing::MemFileSystem;
using Files = std::map<std::string, std::string>;

// Passes calls through to a MemFileSystem and fails the n-th changing operation (a file of a
// write_files or append_files batch, make_dirs, remove, rename), or every one from the n-th on
// when `down_from`.
class FailingFileSystem : public FileSystemWrapper {
 public:
  FailingFileSystem(std::shared_ptr<MemFileSystem> inner, int fail_at, bool down_from)
      : FileSystemWrapper(std::move(inner)), fail_at_(fail_at), down_from_(down_from) {}
  Result<void> write_files(const std::vector<FileWrite>& files) override {
    for (const FileWrite& f : files) {
      if (auto ok = tick("write " + f.path); !ok) return ok;
      if (auto ok = FileSystemWrapper::write_files({f}); !ok) return ok;
    }
    return {};
  }
  Result<void> append_files(const std::vector<FileWrite>& files) override {
    for (const FileWrite& f : files) {
      if (auto ok = tick("append " + f.path); !ok) return ok;
      if (auto ok = FileSystemWrapper::append_files({f}); !ok) return ok;
    }
    return {};
  }
  Result<void> make_dirs(const std::string& path) override {
    if (auto ok = tick("mkdirs " + path); !ok) return ok;
    return FileSystemWrapper::make_dirs(path);
  }
  Result<void> remove(const std::string& path) override {
    if (auto ok = tick("remove " + path); !ok) return ok;
    return FileSystemWrapper::remove(path);
  }
  Result<void> rename(const std::string& from, const std::string& to) override {
    if (auto ok = tick("rename " + from); !ok) return ok;
    return FileSystemWrapper::rename(from, to);
  }
  int operations() const { return operations_; }

 private:
  Result<void> tick(const std::string& what) {
    ++operations_;
    if (operations_ == fail_at_ || (down_from_ && fail_at_ > 0 && operations_ > fail_at_)) {
      return fail("injected failure: " + what);
    }
    return {};
  }
  int fail_at_;
  bool down_from_;
  int operations_ = 0;
};

class RecordingReporter : public DeployReporter {
 public:
  void step(std::string_view message) override { steps.emplace_back(message); }
  void uploaded(std::string_view path, std::uint64_t, std::size_t, std::size_t, std::uint64_t,
                std::uint64_t) override {
    uploads.emplace_back(path);
  }
  void finish() override {}
  std::vector<std::string> steps;
  std::vector<std::string> uploads;
};

Deployment version(const std::string& v) {
  Deployment d;
  d.workflow_js = "celos.defineWorkflow({id: 'wc', version: '" + v + "'});\n";
  d.defaults_js = "var WC_VERSION = '" + v + "';\n";
  d.hdfs_files = {{"lib/wc.jar", "jar " + v}, {"workflow.xml", "<workflow-app v='" + v + "'/>"}};
  d.hdfs_dirs = {"lib"};
  return d;
}

DeployPlan plan_on(std::shared_ptr<FileSystem> fs, const std::string& name = "wc") {
  DeployPlan plan;
  plan.workflow_name = name;
  plan.workflows_fs = fs;
  plan.workflow_js_path = "/etc/celos/workflows/" + name + ".js";
  plan.defaults_fs = fs;
  plan.defaults_js_path = "/etc/celos/defaults/" + name + ".js";
  plan.hdfs_fs = fs;
  plan.hdfs_root = "/user/celos/app";
  plan.hdfs_dir = "/user/celos/app/" + name;
  return plan;
}

Files expected_files(const std::string& v) {
  const Deployment d = version(v);
  return {
      {"/etc/celos/workflows/wc.js", *d.workflow_js},
      {"/etc/celos/defaults/wc.js", *d.defaults_js},
      {"/user/celos/app/wc/lib/wc.jar", "jar " + v},
      {"/user/celos/app/wc/workflow.xml", "<workflow-app v='" + v + "'/>"},
      {"/user/celos/app/other/workflow.xml", "other"},
      {"/etc/celos/workflows/other.js", "other"},
  };
}

RandomSuffix counter() {
  auto n = std::make_shared<int>(0);
  return [n]() { return std::to_string(++*n); };
}

// A MemFileSystem holding version v1 of wc next to another workflow's files.
std::shared_ptr<MemFileSystem> deployed_v1() {
  auto mem = std::make_shared<MemFileSystem>();
  REQUIRE(mem->write("/user/celos/app/other/workflow.xml", "other"));
  REQUIRE(mem->write("/etc/celos/workflows/other.js", "other"));
  RecordingReporter reporter;
  REQUIRE(deploy(plan_on(mem), version("v1"), reporter, counter()));
  REQUIRE(mem->files() == expected_files("v1"));
  return mem;
}

TEST_CASE("a first deploy puts the three parts in place and reports each upload") {
  auto mem = std::make_shared<MemFileSystem>();
  REQUIRE(mem->write("/user/celos/app/other/workflow.xml", "other"));
  REQUIRE(mem->write("/etc/celos/workflows/other.js", "other"));
  RecordingReporter reporter;
  REQUIRE(deploy(plan_on(mem), version("v1"), reporter, counter()));
  CHECK(mem->files() == expected_files("v1"));
  CHECK(reporter.uploads == std::vector<std::string>{"lib/wc.jar", "workflow.xml"});
}

TEST_CASE("a deploy replaces the previous one, dropping files that are gone") {
  auto mem = deployed_v1();
  REQUIRE(mem->write("/user/celos/app/wc/stale.txt", "from an older version"));
  RecordingReporter reporter;
  REQUIRE(deploy(plan_on(mem), version("v2"), reporter, counter()));
  CHECK(mem->files() == expected_files("v2"));
}

TEST_CASE("deploying the same directory twice gives the same result and leaves JS untouched") {
  auto mem = deployed_v1();
  RecordingReporter reporter;
  REQUIRE(deploy(plan_on(mem), version("v1"), reporter, counter()));
  CHECK(mem->files() == expected_files("v1"));
  CHECK(std::count_if(reporter.steps.begin(), reporter.steps.end(),
                      [](const std::string& s) { return s.starts_with("unchanged "); }) == 2);
}

TEST_CASE("a failure at any operation of a deploy leaves the previous deployment in place") {
  for (int n = 1;; ++n) {
    INFO("failing operation " << n);
    auto mem = deployed_v1();
    auto failing = std::make_shared<FailingFileSystem>(mem, n, false);
    RecordingReporter reporter;
    auto result = deploy(plan_on(failing), version("v2"), reporter, counter());
    if (result) {
      CHECK(mem->files() == expected_files("v2"));
      CHECK(n > 4);  // the loop did reach the upload, the swap and the JS files
      break;
    }
    CHECK(result.error().message.find("injected failure") != std::string::npos);
    CHECK(result.error().message.find("previous deployment is in place") != std::string::npos);
    CHECK(mem->files() == expected_files("v1"));
    REQUIRE(n < 100);
  }
}

TEST_CASE("after a deploy whose rollback failed too, the next deploy recovers and cleans up") {
  for (int n = 1;; ++n) {
    INFO("down from operation " << n);
    auto mem = deployed_v1();
    auto failing = std::make_shared<FailingFileSystem>(mem, n, true);
    RecordingReporter reporter;
    auto result = deploy(plan_on(failing), version("v2"), reporter, counter());
    if (result) break;
    RecordingReporter again;
    REQUIRE(deploy(plan_on(mem), version("v2"), again, counter()));
    CHECK(mem->files() == expected_files("v2"));
    REQUIRE(n < 100);
  }
}

TEST_CASE("a syntax error in either JS file changes nothing and names file and line") {
  for (const bool in_workflow : {true, false}) {
    auto mem = deployed_v1();
    auto counting = std::make_shared<FailingFileSystem>(mem, 0, false);
    Deployment broken = version("v2");
    (in_workflow ? broken.workflow_js : broken.defaults_js) =
        "var a = 1;\nvar b = );\nvar c = 2;\n";
    RecordingReporter reporter;
    auto result = deploy(plan_on(counting), broken, reporter, counter());
    REQUIRE_FALSE(result);
    INFO(result.error().message);
    CHECK(result.error().message.find(in_workflow ? "workflow.js:2:" : "defaults.js:2:") !=
          std::string::npos);
    CHECK(counting->operations() == 0);
    CHECK(mem->files() == expected_files("v1"));
  }
}

TEST_CASE("undeploy removes the three parts and nothing else, and may be repeated") {
  auto mem = deployed_v1();
  RecordingReporter reporter;
  REQUIRE(undeploy(plan_on(mem), reporter));
  CHECK(mem->files() == Files{{"/user/celos/app/other/workflow.xml", "other"},
                              {"/etc/celos/workflows/other.js", "other"}});
  REQUIRE(undeploy(plan_on(mem), reporter));
}

TEST_CASE("an unreachable target is an error of the deploy and changes nothing") {
  auto mem = deployed_v1();
  mem->set_down(true);
  RecordingReporter reporter;
  CHECK_FALSE(deploy(plan_on(mem), version("v2"), reporter, counter()));
  mem->set_down(false);
  CHECK(mem->files() == expected_files("v1"));
}

TEST_CASE("JavaScript that parses passes the syntax check, ES5 trailing commas included") {
  CHECK(check_javascript_syntax("w.js", "celos.defineWorkflow({id: 'a', x: [1, 2],});"));
}

TEST_CASE("a syntax error names the file and the line") {
  auto result = check_javascript_syntax("workflow.js", "var a = 1;\n\nfunction ( {\n");
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::kInvalid);
  CHECK(result.error().message.starts_with("workflow.js:3: SyntaxError"));
}

TEST_CASE("a deployment directory is read with its whole hdfs tree") {
  MemFileSystem fs;
  REQUIRE(fs.write("/src/wc/workflow.js", "w"));
  REQUIRE(fs.write("/src/wc/defaults.js", "d"));
  REQUIRE(fs.write("/src/wc/hdfs/workflow.xml", "x"));
  REQUIRE(fs.write("/src/wc/hdfs/lib/a.jar", "a"));
  REQUIRE(fs.make_dirs("/src/wc/hdfs/empty"));
  auto d = read_deployment(fs, "/src/wc");
  REQUIRE(d);
  CHECK(d->workflow_js == "w");
  CHECK(d->defaults_js == "d");
  REQUIRE(d->hdfs_files.size() == 2);
  CHECK(d->hdfs_files[0].relative_path == "lib/a.jar");
  CHECK(d->hdfs_files[1].relative_path == "workflow.xml");
  CHECK(d->hdfs_dirs == std::vector<std::string>{"empty", "lib"});
}

TEST_CASE("a deployment directory without hdfs/ is an argument error") {
  MemFileSystem fs;
  REQUIRE(fs.write("/src/wc/workflow.js", "w"));
  auto d = read_deployment(fs, "/src/wc");
  REQUIRE_FALSE(d);
  CHECK(d.error().code == ErrorCode::kInvalid);
  CHECK(d.error().message == "deployment directory /src/wc has no hdfs/ directory");
}

class FakeOpener : public LocationOpener {
 public:
  Result<std::shared_ptr<FileSystem>> open(const Location& location) override {
    opened.push_back(to_string(location));
    return fs;
  }
  std::shared_ptr<FileSystem> fs = std::make_shared<MemFileSystem>();
  std::vector<std::string> opened;
};

TEST_CASE("a plan puts NAME.js into the target's directories and hdfs/ under the root") {
  FakeOpener opener;
  DeployTarget target{"file:///h.xml", "file:///c.xml", "sftp://u@celos:2222/etc/celos/defaults",
                      "sftp://celos/etc/celos/workflows/"};
  CiOptions options;
  options.workflow_name = "wc";
  options.hdfs_root = "/apps";
  auto hdfs = std::make_shared<MemFileSystem>();
  auto plan = make_deploy_plan(options, target, opener, hdfs);
  REQUIRE(plan);
  CHECK(plan->workflow_js_path == "/etc/celos/workflows/wc.js");
  CHECK(plan->defaults_js_path == "/etc/celos/defaults/wc.js");
  CHECK(plan->hdfs_dir == "/apps/wc");
  CHECK(plan->hdfs_fs == hdfs);
  CHECK(opener.opened == std::vector<std::string>{"sftp://celos/etc/celos/workflows",
                                                  "sftp://u@celos:2222/etc/celos/defaults"});
}

TEST_CASE("fetching a URL reads the path through the opener and names the URL on failure") {
  FakeOpener opener;
  REQUIRE(opener.fs->write("/etc/celos/target.json", "{}"));
  CHECK(fetch_url(opener, "sftp://celos/etc/celos/target.json") == std::string("{}"));
  auto missing = fetch_url(opener, "sftp://celos/nope.json");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("sftp://celos/nope.json") != std::string::npos);
}

Deployment hourly_at(const std::string& minute) {
  Deployment d;
  d.workflow_js =
      "importDefaults('wc'); celos.defineWorkflow({id: 'wc', schedule: "
      "celos.cronSchedule('0 " +
      minute +
      " * * * ?'), schedulingStrategy: celos.serialSchedulingStrategy(), "
      "trigger: celos.alwaysTrigger(), startTime: WC_START, "
      "externalService: celos.commandExternalService('true')});\n";
  d.defaults_js = "var WC_START = '2015-09-01T00:00Z';\n";
  return d;
}

TEST_CASE("a deploy plan reports the slots the new version moves, and deploys nothing") {
  auto mem = std::make_shared<MemFileSystem>();
  RecordingReporter reporter;
  REQUIRE(deploy(plan_on(mem), hourly_at("0"), reporter, counter()));
  const auto before = mem->files();
  RecordingReporter planned;
  auto changed = plan_deploy(plan_on(mem), hourly_at("30"), make_time(2015, 9, 13), planned);
  REQUIRE(changed);
  CHECK(*changed);
  CHECK(mem->files() == before);
  REQUIRE(planned.steps.size() > 2);
  CHECK(planned.steps[0] == "plan: what deploying wc changes (nothing deployed)");
  CHECK(planned.steps[1] ==
        "plan for 2015-09-13T00:00:00.000Z .. 2015-09-20T00:00:00.000Z: 0 slots added, 0 removed, "
        "168 moved; 0 workflows added, 0 removed, 1 changed");
  RecordingReporter first;  // nothing deployed yet: every slot is added
  auto fresh = plan_deploy(plan_on(std::make_shared<MemFileSystem>()), hourly_at("0"),
                           make_time(2015, 9, 13), first);
  REQUIRE(fresh);
  CHECK(first.steps.at(1).find("168 slots added, 0 removed, 0 moved; 1 workflows added") !=
        std::string::npos);
}

}  // namespace
}  // namespace celos
