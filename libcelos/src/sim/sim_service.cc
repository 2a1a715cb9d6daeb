// Simulated jobs: a submission gets the id `sim-<n>` (n counts the workflow's submissions, so
// ids are short and the same in every run); the job runs from its start for the scenario's
// duration, then succeeds or fails by the scenario's rules. A killed job has failed.
#include <fmt/format.h>

#include "celos/mutex.h"
#include "sim/services.h"

namespace celos::sim {
namespace {

constexpr std::string_view kIdPrefix = "sim-";

struct SimJob {
  Time slot{};
  int attempt = 0;
  bool started = false;
  bool killed = false;
  Time ends{};
};

class SimService final : public ExternalService {
 public:
  SimService(std::string workflow, ExternalServicePtr real, JobSpec job, const Clock& clock,
             const Outages& outages)
      : workflow_(std::move(workflow)),
        real_(std::move(real)),
        job_(std::move(job)),
        clock_(clock),
        outages_(outages),
        kind_(real_ ? std::string(real_->kind()) : "sim"),
        endpoint_(real_ ? real_->endpoint() : "") {}

  Result<std::string> submit(const SlotId& slot) override {
    if (auto down = reachable(); !down) return tl::unexpected(down.error());
    MutexLock lock(mutex_);
    jobs_.push_back(SimJob{slot.time, ++attempts_[slot.time]});
    return fmt::format("{}{}", kIdPrefix, jobs_.size());
  }

  Result<void> start(const SlotId&, const std::string& external_id) override {
    if (auto down = reachable(); !down) return down;
    MutexLock lock(mutex_);
    SimJob* job = find(external_id);
    if (job == nullptr) return unknown(external_id);
    if (!job->started) {
      job->started = true;
      job->ends = clock_.now() + job_.duration;
    }
    return {};
  }

  Result<ExternalStatus> status(const SlotId&, const std::string& external_id) override {
    if (auto down = reachable(); !down) return tl::unexpected(down.error());
    MutexLock lock(mutex_);
    const SimJob* job = find(external_id);
    if (job == nullptr) return unknown(external_id);
    if (job->killed) return ExternalStatus(JobState::kFailure, "killed");
    if (!job->started) return ExternalStatus::kSubmitted;
    if (clock_.now() < job->ends) return ExternalStatus::kRunning;
    if (attempt_fails(job_, workflow_, job->slot, job->attempt)) {
      return ExternalStatus(JobState::kFailure,
                            fmt::format("simulated failure of attempt {} ({})", job->attempt,
                                        job_.field.empty() ? "jobs" : job_.field));
    }
    return ExternalStatus::kSuccess;
  }

  Result<void> kill(const SlotId&, const std::string& external_id) override {
    if (auto down = reachable(); !down) return down;
    MutexLock lock(mutex_);
    if (SimJob* job = find(external_id)) job->killed = true;
    return {};
  }

  std::string describe() const override {
    return "simulated " + (real_ ? real_->describe() : std::string("service"));
  }
  std::string_view kind() const override { return kind_; }
  std::string endpoint() const override { return endpoint_; }
  std::string limit_endpoint() const override { return real_ ? real_->limit_endpoint() : ""; }
  ServiceTraits traits() const override {
    ServiceTraits traits = real_ ? real_->traits() : ServiceTraits{};
    traits.keeps_job_output = false;  // there is no output to read
    return traits;
  }

 private:
  Result<void> reachable() const {
    const std::string why = outages_.service_down(kind_, endpoint_);
    if (why.empty()) return {};
    return fail(fmt::format("{} unreachable: {}", kind_, why), ErrorCode::kUnavailable);
  }
  SimJob* find(const std::string& external_id) REQUIRES(mutex_) {
    if (external_id.rfind(kIdPrefix, 0) != 0) return nullptr;
    const std::size_t n = std::strtoull(external_id.c_str() + kIdPrefix.size(), nullptr, 10);
    return n == 0 || n > jobs_.size() ? nullptr : &jobs_[n - 1];
  }
  static tl::unexpected<Error> unknown(const std::string& external_id) {
    return fail("no simulated job " + external_id, ErrorCode::kNotFound);
  }

  const std::string workflow_;
  const ExternalServicePtr real_;
  const JobSpec job_;
  const Clock& clock_;
  const Outages& outages_;
  const std::string kind_, endpoint_;
  Mutex mutex_;
  std::vector<SimJob> jobs_ GUARDED_BY(mutex_);  // sim-<n> is jobs_[n - 1]
  std::map<Time, int> attempts_ GUARDED_BY(mutex_);
};

// splitmix64: a well-mixed 64-bit hash step, so that each (seed, workflow, slot, attempt) draws
// its own number whatever order the calls come in.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

bool attempt_fails(const JobSpec& job, const std::string& workflow, Time slot, int attempt) {
  if (job.fail_on_attempt.count(attempt) || job.fail_at.count(slot)) return true;
  if (job.failure_rate <= 0) return false;
  std::uint64_t h = mix(job.seed);
  for (unsigned char c : workflow) h = mix(h ^ c);  // FNV would do; one mixer is enough
  h = mix(h ^ std::uint64_t(slot.time_since_epoch().count()));
  h = mix(h ^ std::uint64_t(attempt));
  const double draw = double(h >> 11) / double(std::uint64_t{1} << 53);  // [0, 1)
  return draw < job.failure_rate;
}

std::shared_ptr<ExternalService> make_sim_service(std::string workflow, ExternalServicePtr real,
                                                  const JobSpec& job, const Clock& clock,
                                                  const Outages& outages) {
  return std::make_shared<SimService>(std::move(workflow), std::move(real), job, clock, outages);
}

}  // namespace celos::sim
