// A leader that lost its lease changes no file and starts no job (SPEC §11, issue 33 point 4):
// a scheduler story whose fake lease guard fails at the n-th confirm, for every n. From the
// failure on, no output is removed, no done flag written, no job submitted, started or killed,
// whatever the story does next (the jobs of the "new leader" keep writing their outputs).
#include <mutex>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "celos/dataset.h"
#include "celos/file_system_wrapper.h"
#include "celos/lease_guard.h"
#include "celos/scheduler.h"
#include "testing/scheduler_world.h"

using namespace celos;
using celos::testing::FakeExternalService;
using celos::testing::kStart;
using celos::testing::MemFileSystem;
using std::chrono::hours;
using std::chrono::minutes;

namespace {

// celos writes the done flags of a command's successful slots.
class FencedCommandService : public FakeExternalService {
 public:
  ServiceTraits traits() const override { return {.writes_done_flags = true}; }
};

// The file system celos sees: every change it makes is logged; the story's "jobs" write to the
// file system underneath, unlogged.
class FencedFileSystem : public FileSystemWrapper {
 public:
  explicit FencedFileSystem(std::shared_ptr<MemFileSystem> fs) : FileSystemWrapper(std::move(fs)) {}
  Result<void> write_files(const std::vector<FileWrite>& files) override {
    for (const FileWrite& f : files) log("write " + f.path);
    return FileSystemWrapper::write_files(files);
  }
  Result<void> append_files(const std::vector<FileWrite>& files) override {
    for (const FileWrite& f : files) log("append " + f.path);
    return FileSystemWrapper::append_files(files);
  }
  Result<void> make_dirs(const std::string& p) override {
    log("mkdir " + p);
    return FileSystemWrapper::make_dirs(p);
  }
  Result<void> remove(const std::string& p) override {
    log("remove " + p);
    return FileSystemWrapper::remove(p);
  }
  Result<void> rename(const std::string& from, const std::string& to) override {
    log("rename " + from + " " + to);
    return FileSystemWrapper::rename(from, to);
  }
  std::vector<std::string> changes() const {
    std::lock_guard lock(mutex_);
    return changes_;
  }

 private:
  void log(std::string change) {
    std::lock_guard lock(mutex_);
    changes_.push_back(std::move(change));
  }
  mutable std::mutex mutex_;
  std::vector<std::string> changes_;
};

// Fails from the fail_at-th confirm on (1-based; 0: never), as a lost lease does; calls
// on_failure once, at the first failure.
class FailingGuard : public LeaseGuard {
 public:
  Result<void> confirm() override {
    std::lock_guard lock(mutex_);
    ++confirms;
    if (fail_at == 0 || confirms < fail_at) return {};
    if (!failed) {
      failed = true;
      on_failure();
    }
    return fail("lease lost (fake)", ErrorCode::kUnavailable);
  }
  int fail_at = 0;
  int confirms = 0;
  bool failed = false;
  std::function<void()> on_failure;

 private:
  std::mutex mutex_;
};

// What the jobs write to (`data`) and the same files as celos sees them, every change logged
// (`seen`). A base of World, so that they exist before the scheduler world is made.
struct Recorded {
  std::shared_ptr<MemFileSystem> data = std::make_shared<MemFileSystem>();
  std::shared_ptr<FencedFileSystem> seen = std::make_shared<FencedFileSystem>(data);
};

// Two command-like workflows "a" and "b" writing the datasets out-a and out-b; the scheduler
// confirms its lease with `guard`.
struct LeaseFenceWorld : Recorded, celos::testing::SchedulerWorld {
  FailingGuard guard;

  LeaseFenceWorld()
      : SchedulerWorld({.data = seen, .service = std::make_shared<FencedCommandService>()}) {
    std::vector<DatasetDeclaration> declarations;
    for (std::string id : {"a", "b"}) {
      declarations.push_back(
          {Dataset{"out-" + id, "/out/" + id + "/${year}${month}${day}/${hour}", "", "_SUCCESS"},
           "d.js", 1});
      add(id).outputs = {{"out-" + id}};
    }
    link_datasets(*config, declarations);
    REQUIRE(config->errors.empty());
    scheduler.set_lease_guard(guard);
  }

  // What celos did to the outside world: file changes, then submits, starts and kills.
  std::vector<std::string> effects() const {
    std::vector<std::string> out = seen->changes();
    for (const std::string& call : service->calls()) {
      if (call.rfind("status", 0) != 0) out.push_back(call);
    }
    return out;
  }

  void job_writes(const std::string& path) { REQUIRE(data->write(path, "part")); }

  // Leftovers removed before submit, a done flag, a failure's removal, a restart, an API rerun
  // of a SUCCESS slot and an API kill of a RUNNING one.
  void story() {
    const Time now = kStart + hours(2) + minutes(1);  // slots 00:00 and 01:00
    job_writes("/out/a/20150913/00/part-0");          // leftovers of an earlier attempt
    job_writes("/out/b/20150913/00/part-0");
    scheduler.step(now);  // READY
    scheduler.step(now);  // a@00 (job-1), b@00 (job-2): leftovers removed, submitted, started
    job_writes("/out/a/20150913/00/part-1");  // the jobs write
    job_writes("/out/b/20150913/00/part-1");
    service->set_status("job-1", ExternalStatus::kSuccess);
    service->set_status("job-2", ExternalStatus::kFailure);
    scheduler.step(now);  // a@00 done flag + SUCCESS, b@00's output removed + FAILURE
    scheduler.step(now);  // a@01 (job-3), b@01 (job-4)
    service->set_status("job-3", ExternalStatus::kSubmitted);  // recorded, never started
    scheduler.step(now);                                       // job-3 started again
    job_writes("/out/b/20150913/01/part-0");
    (void)scheduler.kill("b", kStart + hours(1), now);  // job-4 killed, its output removed
    (void)scheduler.rerun("a", kStart, now);            // a@00's done flag removed
  }
};

bool has(const std::vector<std::string>& effects, const std::string& prefix) {
  for (const std::string& e : effects) {
    if (e.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("without a lost lease the fence story removes, flags, submits, starts and kills") {
  LeaseFenceWorld w;
  w.story();
  const auto effects = w.effects();
  CHECK(has(effects, "remove /out/a/20150913/00"));  // leftover, before submit
  CHECK(has(effects, "write /out/a/20150913/00/_SUCCESS"));
  CHECK(has(effects, "remove /out/b/20150913/00"));           // after the failure
  CHECK(has(effects, "remove /out/b/20150913/01"));           // after the kill
  CHECK(has(effects, "remove /out/a/20150913/00/_SUCCESS"));  // the rerun
  CHECK(w.service->started ==
        std::vector<std::string>{"job-1", "job-2", "job-3", "job-4", "job-3"});
  CHECK(w.service->killed == std::vector<std::string>{"job-4"});
  CHECK(w.guard.confirms > 8);
}

TEST_CASE("after the lease is lost at any confirm, nothing more is removed, flagged or started") {
  int total = 0;
  {
    LeaseFenceWorld w;
    w.story();
    total = w.guard.confirms;
  }
  for (int n = 1; n <= total; ++n) {
    INFO("the lease is lost at confirm " << n << " of " << total);
    LeaseFenceWorld w;
    std::vector<std::string> at_failure;
    w.guard.fail_at = n;
    w.guard.on_failure = [&] { at_failure = w.effects(); };
    w.story();
    REQUIRE(w.guard.failed);
    CHECK(w.effects() == at_failure);
  }
}

TEST_CASE("a step that lost its lease stops, reports it and leaves the state as it is") {
  LeaseFenceWorld w;
  const Time now = kStart + minutes(1);
  w.scheduler.step(now);  // a@00, b@00 READY
  w.guard.fail_at = 1;
  w.guard.on_failure = [] {};
  auto report = w.scheduler.step(now);
  CHECK(w.service->submitted.empty());
  CHECK(w.service->started.empty());
  for (std::string id : {"a", "b"}) {
    auto slot = w.db->get_slot({id, kStart});
    REQUIRE(slot);
    REQUIRE(slot->has_value());
    CHECK((*slot)->status == SlotStatus::kReady);
  }
  REQUIRE_FALSE(report.errors.empty());
  CHECK_THAT(report.errors.back(), Catch::Contains("lease lost, the step stopped") &&
                                       Catch::Contains("lease lost (fake)"));
}
