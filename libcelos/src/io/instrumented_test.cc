// The instrumenting decorators tell any ExternalCallObserver of the calls they time: io/ knows
// the observer, not Metrics (which web/metrics_test.cc checks end to end).
#include <catch2/catch.hpp>

#include "celos/external_call_observer.h"
#include "testing/fakes.h"

using namespace celos;
using celos::testing::FakeExternalService;
using celos::testing::FakeFileSystemResolver;
using celos::testing::MemFileSystem;

namespace {

// "service operation ok|failed" per call.
class RecordingObserver final : public ExternalCallObserver {
 public:
  std::vector<std::string> calls;
  void on_external_call(std::string_view service, std::string_view operation, double seconds,
                        bool ok) override {
    CHECK(seconds >= 0);
    calls.push_back(std::string(service) + " " + std::string(operation) + (ok ? " ok" : " failed"));
  }
};

using Calls = std::vector<std::string>;

}  // namespace

TEST_CASE("The service decorator tells the observer of each call, by the service's kind") {
  RecordingObserver observer;
  auto fake = std::make_shared<FakeExternalService>();
  fake->kind_name = "slurm";
  auto service = instrument_service(fake, observer);
  const SlotId slot{"wf", Time{}};
  auto id = service->submit(slot);
  REQUIRE(id);
  (void)service->status_many({{slot, *id}, {slot, "unknown"}});  // one entry failed: failed
  fake->set_down(true);
  CHECK_FALSE(service->kill(slot, *id));
  CHECK(observer.calls == Calls{"slurm submit ok", "slurm status failed", "slurm kill failed"});
}

TEST_CASE("The file system decorator times listings as checks, a missing directory answers") {
  RecordingObserver observer;
  auto mem = std::make_shared<MemFileSystem>();
  mem->set_prefers_listing(true);
  FakeFileSystemResolver inner(mem);
  auto resolver = instrument_file_systems(inner, observer, "webhdfs");
  auto fs = resolver->resolve("").value();
  CHECK(fs->prefers_listing());  // forwarded: the step lists through the decorator
  CHECK(fs->write("/d/a", "x"));
  CHECK(fs->list("/d").value().size() == 1);
  CHECK(fs->list("/none").error().code == ErrorCode::kNotFound);
  mem->set_down(true);
  CHECK_FALSE(fs->list("/d"));
  CHECK(observer.calls == Calls{"webhdfs exists ok", "webhdfs exists ok", "webhdfs exists failed"});
}

TEST_CASE("The file system decorator tells the observer of exists, remove and list only") {
  RecordingObserver observer;
  auto mem = std::make_shared<MemFileSystem>();
  FakeFileSystemResolver inner(mem);
  auto resolver = instrument_file_systems(inner, observer, "webhdfs");
  auto local = resolver->resolve("file:///").value();
  auto fallback = resolver->resolve("").value();
  CHECK(local->write("/a", "x"));
  CHECK(local->exists("/a").value());
  CHECK(fallback->remove("/a"));
  CHECK(local->read("/b").error().code == ErrorCode::kNotFound);
  CHECK(observer.calls == Calls{"file exists ok", "webhdfs delete ok"});
}
