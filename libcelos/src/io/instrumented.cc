// Decorators that time external calls into Metrics (SPEC §13): the services and file systems
// themselves stay unaware of metrics.
#include <chrono>
#include <map>

#include "celos/external_service_wrapper.h"
#include "celos/file_system_wrapper.h"
#include "celos/metrics.h"

namespace celos {
namespace {

using Clock = std::chrono::steady_clock;

// Runs `call`, records its duration and whether it succeeded, returns its result.
template <class F>
auto timed(Metrics& metrics, std::string_view service, std::string_view operation, F&& call) {
  const auto started = Clock::now();
  auto result = call();
  metrics.observe_external_call(service, operation,
                                std::chrono::duration<double>(Clock::now() - started).count(),
                                result.has_value());
  return result;
}

// Times the calls that reach the service; everything else (its endpoint and batching, which
// the step groups and gates by) is the wrapped service's own, forwarded by the wrapper.
class InstrumentedService final : public ExternalServiceWrapper {
 public:
  InstrumentedService(ExternalServicePtr inner, Metrics& metrics)
      : ExternalServiceWrapper(std::move(inner)), metrics_(metrics), kind_(kind()) {}

  Result<std::string> submit(const SlotId& slot) override {
    return timed(metrics_, kind_, "submit", [&] { return target().submit(slot); });
  }
  Result<std::string> submit_with(const SlotId& slot, const SubmitContext& context) override {
    return timed(metrics_, kind_, "submit", [&] { return target().submit_with(slot, context); });
  }
  Result<void> start(const SlotId& slot, const std::string& id) override {
    return timed(metrics_, kind_, "start", [&] { return target().start(slot, id); });
  }
  Result<ExternalStatus> status(const SlotId& slot, const std::string& id) override {
    return timed(metrics_, kind_, "status", [&] { return target().status(slot, id); });
  }
  Result<void> kill(const SlotId& slot, const std::string& id) override {
    return timed(metrics_, kind_, "kill", [&] { return target().kill(slot, id); });
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
    const auto started = Clock::now();
    auto results = call();
    bool all_ok = true;
    for (const auto& [id, result] : results) all_ok = all_ok && result.has_value();
    metrics_.observe_external_call(kind_, operation,
                                   std::chrono::duration<double>(Clock::now() - started).count(),
                                   all_ok);
    return results;
  }

  Metrics& metrics_;
  std::string kind_;
};

class InstrumentedSource final : public WorkflowSource {
 public:
  InstrumentedSource(WorkflowSource& inner, Metrics& metrics) : inner_(inner), metrics_(metrics) {}

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
        wrapper = old != wrappers_.end() ? old->second : instrument_service(workflow.service, metrics_);
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
  Metrics& metrics_;
  WorkflowConfigPtr last_inner_;
  WorkflowConfigPtr last_;
  std::map<const ExternalService*, ExternalServicePtr> wrappers_;
};

// Times exists() and remove(), the calls of SPEC §16's metrics; the rest is forwarded untimed.
class InstrumentedFileSystem final : public FileSystemWrapper {
 public:
  InstrumentedFileSystem(std::shared_ptr<FileSystem> inner, Metrics& metrics, std::string service)
      : FileSystemWrapper(std::move(inner)), metrics_(metrics), service_(std::move(service)) {}

  Result<bool> exists(const std::string& path) override {
    return timed(metrics_, service_, "exists", [&] { return target().exists(path); });
  }
  Result<void> remove(const std::string& path) override {
    return timed(metrics_, service_, "delete", [&] { return target().remove(path); });
  }

 private:
  Metrics& metrics_;
  std::string service_;
};

class InstrumentedResolver final : public FileSystemResolver {
 public:
  InstrumentedResolver(FileSystemResolver& inner, Metrics& metrics, std::string default_service)
      : inner_(inner), metrics_(metrics), default_service_(std::move(default_service)) {}

  Result<std::shared_ptr<FileSystem>> resolve(std::string_view uri) override {
    auto fs = inner_.resolve(uri);
    if (!fs) return fs;
    std::string service = uri.empty() ? default_service_
                          : uri.substr(0, 5) == "file:" ? "file"
                                                        : "webhdfs";
    return std::shared_ptr<FileSystem>(
        std::make_shared<InstrumentedFileSystem>(*fs, metrics_, std::move(service)));
  }

 private:
  FileSystemResolver& inner_;
  Metrics& metrics_;
  std::string default_service_;
};

}  // namespace

ExternalServicePtr instrument_service(ExternalServicePtr service, Metrics& metrics) {
  return std::make_shared<InstrumentedService>(std::move(service), metrics);
}

std::unique_ptr<WorkflowSource> instrument_workflow_source(WorkflowSource& inner, Metrics& metrics) {
  return std::make_unique<InstrumentedSource>(inner, metrics);
}

std::unique_ptr<FileSystemResolver> instrument_file_systems(FileSystemResolver& inner,
                                                            Metrics& metrics,
                                                            std::string default_service) {
  return std::make_unique<InstrumentedResolver>(inner, metrics, std::move(default_service));
}

}  // namespace celos
