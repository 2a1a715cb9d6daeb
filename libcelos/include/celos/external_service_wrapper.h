// The forwarding base of ExternalService decorators (celos/external_service.h).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "celos/external_service.h"

namespace celos {

// A service that forwards every call to the one it wraps (as LevelDB's EnvWrapper): a decorator
// derives from it and overrides only what it changes (the metrics decorator times the calls and
// answers everything else as the wrapped service does).
class ExternalServiceWrapper : public ExternalService {
 public:
  explicit ExternalServiceWrapper(ExternalServicePtr target) : target_(std::move(target)) {}
  ExternalService& target() const { return *target_; }

  Result<std::string> submit(const SlotId& slot) override { return target_->submit(slot); }
  Result<std::string> submit_with(const SlotId& slot, const SubmitContext& context) override {
    return target_->submit_with(slot, context);
  }
  Result<void> start(const SlotId& slot, const std::string& external_id) override {
    return target_->start(slot, external_id);
  }
  Result<ExternalStatus> status(const SlotId& slot, const std::string& external_id) override {
    return target_->status(slot, external_id);
  }
  Result<void> kill(const SlotId& slot, const std::string& external_id) override {
    return target_->kill(slot, external_id);
  }
  std::string describe() const override { return target_->describe(); }
  std::string_view kind() const override { return target_->kind(); }
  std::string endpoint() const override { return target_->endpoint(); }
  std::string limit_endpoint() const override { return target_->limit_endpoint(); }
  std::map<std::string, Result<ExternalStatus>> status_many(const std::vector<Job>& jobs) override {
    return target_->status_many(jobs);
  }
  std::map<std::string, Result<void>> start_many(const std::vector<Job>& jobs) override {
    return target_->start_many(jobs);
  }
  ServiceTraits traits() const override { return target_->traits(); }
  Result<std::string> job_log(const SlotId& slot, const std::string& external_id,
                              std::string_view stream, std::size_t tail) override {
    return target_->job_log(slot, external_id, stream, tail);
  }

 private:
  ExternalServicePtr target_;
};

}  // namespace celos
