// Decorators that time external calls into an ExternalCallObserver (Metrics in celos-server,
// SPEC §13): the services and file systems themselves stay unaware of it.
#include <chrono>
#include <map>

#include "celos/external_call_observer.h"
#include "celos/external_service_wrapper.h"
#include "celos/file_system_wrapper.h"

namespace celos {
namespace {

// The real clock on purpose (not celos::Clock): the metrics measure how long a real call took.
using RealClock = std::chrono::steady_clock;

// Runs `call`, records its duration and whether it succeeded, returns its result.
template <class F>
auto timed(ExternalCallObserver& observer, std::string_view service, std::string_view operation,
           F&& call) {
  const auto started = RealClock::now();
  auto result = call();
  observer.on_external_call(service, operation,
                            std::chrono::duration<double>(RealClock::now() - started).count(),
                            result.has_value());
  return result;
}

// Times the calls that reach the service; everything else (its endpoint and batching, which
// the step groups and gates by) is the wrapped service's own, forwarded by the wrapper.
class InstrumentedService final : public ExternalServiceWrapper {
 public:
  InstrumentedService(ExternalServicePtr inner, ExternalCallObserver& observer)
      : ExternalServiceWrapper(std::move(inner)), observer_(observer), kind_(kind()) {}

  Result<std::string> submit(const SlotId& slot) override {
    return timed(observer_, kind_, "submit", [&] { return target().submit(slot); });
  }
  Result<std::string> submit_with(const SlotId& slot, const SubmitContext& context) override {
    return timed(observer_, kind_, "submit", [&] { return target().submit_with(slot, context); });
  }
  Result<void> start(const SlotId& slot, const std::string& id) override {
    return timed(observer_, kind_, "start", [&] { return target().start(slot, id); });
  }
  Result<ExternalStatus> status(const SlotId& slot, const std::string& id) override {
    return timed(observer_, kind_, "status", [&] { return target().status(slot, id); });
  }
  Result<void> kill(const SlotId& slot, const std::string& id) override {
    return timed(observer_, kind_, "kill", [&] { return target().kill(slot, id); });
  }
  std::map<std::string, Result<ExternalStatus>> status_many(const std::vector<Job>& jobs) override {
    return batch("status", [&] { return target().status_many(jobs); });
  }
  std::map<std::string, Result<void>> start_many(const std::vector<Job>& jobs) override {
    return batch("start", [&] { return target().start_many(jobs); });
  }

 private:
  // One observation for the batch call; every failed entry counts as an error.
  template <class F>
  auto batch(std::string_view operation, F&& call) -> decltype(call()) {
    const auto started = RealClock::now();
    auto results = call();
    bool all_ok = true;
    for (const auto& [id, result] : results) all_ok = all_ok && result.has_value();
    observer_.on_external_call(kind_, operation,
                               std::chrono::duration<double>(RealClock::now() - started).count(),
                               all_ok);
    return results;
  }

  ExternalCallObserver& observer_;
  std::string kind_;
};

class InstrumentedSource final : public WorkflowSource {
 public:
  InstrumentedSource(WorkflowSource& inner, ExternalCallObserver& observer)
      : inner_(inner), observer_(observer) {}

  WorkflowConfigPtr load() override {
    WorkflowConfigPtr config = inner_.load();
    if (config == last_inner_) return last_;
    auto copy = std::make_shared<WorkflowConfig>(*config);
    std::map<const ExternalService*, ExternalServicePtr> wrappers;
    for (auto& [id, workflow] : copy->workflows) {
      if (!workflow.service) continue;
      const ExternalService* raw = workflow.service.get();
      auto& wrapper = wrappers[raw];
      if (!wrapper) {
        const auto old = wrappers_.find(raw);
        wrapper =
            old != wrappers_.end() ? old->second : instrument_service(workflow.service, observer_);
      }
      workflow.service = wrapper;
    }
    wrappers_ = std::move(wrappers);  // services no longer used are let go
    last_inner_ = std::move(config);
    last_ = std::move(copy);
    return last_;
  }

  void clear_cache() override { inner_.clear_cache(); }

 private:
  WorkflowSource& inner_;
  ExternalCallObserver& observer_;
  WorkflowConfigPtr last_inner_;
  WorkflowConfigPtr last_;
  std::map<const ExternalService*, ExternalServicePtr> wrappers_;
};

// Times exists() and remove(), the calls of SPEC §16's metrics, and list(), which answers the
// data checks of a directory's waiting paths at once (issue 28; timed as "exists"); the rest is
// forwarded untimed.
class InstrumentedFileSystem final : public FileSystemWrapper {
 public:
  InstrumentedFileSystem(std::shared_ptr<FileSystem> inner, ExternalCallObserver& observer,
                         std::string service)
      : FileSystemWrapper(std::move(inner)), observer_(observer), service_(std::move(service)) {}

  Result<bool> exists(const std::string& path) override {
    return timed(observer_, service_, "exists", [&] { return target().exists(path); });
  }
  Result<void> remove(const std::string& path) override {
    return timed(observer_, service_, "delete", [&] { return target().remove(path); });
  }
  Result<std::vector<FileStatus>> list(const std::string& directory) override {
    return timed_listing([&] { return target().list(directory); });
  }
  Result<std::vector<FileStatus>> list_names(const std::string& directory) override {
    return timed_listing([&] { return target().list_names(directory); });
  }

 private:
  template <typename Listing>
  Result<std::vector<FileStatus>> timed_listing(const Listing& listing) {
    const auto started = RealClock::now();
    auto result = listing();
    // A directory that does not exist answers its paths' checks ("missing"), as exists() would.
    const bool answered = result || result.error().code == ErrorCode::kNotFound;
    observer_.on_external_call(service_, "exists",
                               std::chrono::duration<double>(RealClock::now() - started).count(),
                               answered);
    return result;
  }

  ExternalCallObserver& observer_;
  std::string service_;
};

class InstrumentedResolver final : public FileSystemResolver {
 public:
  InstrumentedResolver(FileSystemResolver& inner, ExternalCallObserver& observer,
                       std::string default_service)
      : inner_(inner), observer_(observer), default_service_(std::move(default_service)) {}

  Result<std::shared_ptr<FileSystem>> resolve(std::string_view uri) override {
    auto fs = inner_.resolve(uri);
    if (!fs) return fs;
    std::string service = uri.empty()                   ? default_service_
                          : uri.substr(0, 5) == "file:" ? "file"
                                                        : "webhdfs";
    return std::shared_ptr<FileSystem>(
        std::make_shared<InstrumentedFileSystem>(*fs, observer_, std::move(service)));
  }

 private:
  FileSystemResolver& inner_;
  ExternalCallObserver& observer_;
  std::string default_service_;
};

}  // namespace

ExternalServicePtr instrument_service(ExternalServicePtr service, ExternalCallObserver& observer) {
  return std::make_shared<InstrumentedService>(std::move(service), observer);
}

std::unique_ptr<WorkflowSource> instrument_workflow_source(WorkflowSource& inner,
                                                           ExternalCallObserver& observer) {
  return std::make_unique<InstrumentedSource>(inner, observer);
}

std::unique_ptr<FileSystemResolver> instrument_file_systems(FileSystemResolver& inner,
                                                            ExternalCallObserver& observer,
                                                            std::string default_service) {
  return std::make_unique<InstrumentedResolver>(inner, observer, std::move(default_service));
}

}  // namespace celos
