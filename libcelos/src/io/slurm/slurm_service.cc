// The Slurm external service (celos/slurm_service.h). The text of the commands and of their
// answers is io/slurm/slurm_commands.cc; this file decides what to run and what the answers mean.
#include "celos/slurm_service.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "celos/dataset.h"
#include "celos/mutex.h"
#include "celos/utf8.h"
#include "io/slurm/slurm_commands.h"

namespace celos {
namespace {

namespace fs = std::filesystem;
using slurm::QueueEntry;

std::optional<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<void> write_script(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) return fail(fmt::format("cannot write {}", temp));
  }
  std::error_code error;
  fs::permissions(temp,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  error);
  if (!error) fs::rename(temp, path, error);
  if (error) return fail(fmt::format("cannot write {}: {}", path, error.message()));
  return {};
}

// Controllers that did not answer lately, shared by the services that talk to one (same
// commands, same SLURM_CONF, same jobs directory): SPEC §16 wants the remaining calls to an
// endpoint that timed out or refused connections to fail at once instead of waiting again.
class Outages {
 public:
  std::optional<std::string> down(const std::string& endpoint, Clock::Monotonic now) {
    MutexLock lock(mutex_);
    auto found = down_.find(endpoint);
    if (found == down_.end() || now >= found->second.until) {
      return std::nullopt;
    }
    return found->second.why;
  }
  void trip(const std::string& endpoint, std::string why, Clock::Monotonic until) {
    MutexLock lock(mutex_);
    down_[endpoint] = {until, std::move(why)};
  }
  void clear(const std::string& endpoint) {
    MutexLock lock(mutex_);
    down_.erase(endpoint);
  }

 private:
  struct Down {
    Clock::Monotonic until;
    std::string why;
  };
  Mutex mutex_;
  std::map<std::string, Down> down_ GUARDED_BY(mutex_);
};

Outages& outages() {
  static Outages instance;
  return instance;
}

std::string join_ids(const std::vector<ExternalService::Job>& jobs) {
  std::string ids;
  for (const auto& job : jobs) ids += (ids.empty() ? "" : ",") + job.external_id;
  return ids;
}

class SlurmService : public ExternalService {
 public:
  SlurmService(SlurmServiceOptions options, ProcessRunnerPtr runner)
      : options_(std::move(options)), runner_(std::move(runner)) {
    const char* conf = std::getenv("SLURM_CONF");
    endpoint_ = fmt::format("{}|{}|{}", options_.slurm_bin, conf ? conf : "", options_.jobs_dir);
  }

  Result<std::string> submit(const SlotId& slot) override { return submit_with(slot, {}); }

  // Datasets: `${inputs.<id>}` in the script and CELOS_INPUT_<ID> in the job's environment.
  Result<std::string> submit_with(const SlotId& slot, const SubmitContext& context) override {
    const std::string slot_dir = slurm_slot_dir(options_.jobs_dir, slot);
    std::error_code error;
    fs::create_directories(slot_dir, error);
    if (error) return fail(fmt::format("cannot create {}: {}", slot_dir, error.message()));
    ProcessRequest request = command("sbatch", slurm::sbatch_args(options_, slot, slot_dir));
    std::map<std::string, std::string> env = context.env;
    const auto in_job_dir = input_list_variables(context, env);
    for (const auto& [name, value] : options_.env) env[name] = value;
    request.env = slurm::job_environment(slot, env);
    request.input = slurm::wrapper_script(slot_dir, options_.cwd.empty(), in_job_dir);
    auto answer = run(request);
    if (!answer) return fail("sbatch: " + answer.error().message);
    if (answer->exit_code != 0) {
      const std::string why = slurm::one_line(answer->err);
      if (slurm::controller_unreachable(answer->err)) return fail("sbatch: " + why);
      return fail("sbatch refused the job: " + why, ErrorCode::kInvalid);
    }
    const std::string id = slurm::parse_job_id(answer->out);
    if (id.empty()) {
      return fail(fmt::format("sbatch answered no job id: \"{}\"", slurm::one_line(answer->out)));
    }
    if (auto prepared = prepare_job_dir(slot, slot_dir + "/" + id, context); !prepared) {
      [[maybe_unused]] auto cancelled = kill(slot, id);
      return tl::unexpected(prepared.error());
    }
    return id;
  }

  Result<void> start(const SlotId& slot, const std::string& external_id) override {
    return start_many({Job{slot, external_id}}).at(external_id);
  }

  Result<ExternalStatus> status(const SlotId& slot, const std::string& external_id) override {
    return status_many({Job{slot, external_id}}).at(external_id);
  }

  std::map<std::string, Result<void>> start_many(const std::vector<Job>& jobs) override;
  std::map<std::string, Result<ExternalStatus>> status_many(const std::vector<Job>& jobs) override;
  // One squeue for all RUNNING jobs, one `scontrol release` for all jobs of a step; the job
  // writes its output into the jobs directory, and cannot write a done flag itself.
  ServiceTraits traits() const override {
    return {.batches_status = true,
            .batches_start = true,
            .writes_done_flags = true,
            .keeps_job_output = true};
  }
  // Services with the same endpoint (commands, SLURM_CONF, jobs directory) can answer for each
  // other's jobs, so the step batches them together.
  std::string endpoint() const override { return "slurm " + endpoint_; }
  // Limits are per partition ("slurm" alone: the cluster's default partition).
  std::string limit_endpoint() const override {
    return options_.partition.empty() ? "slurm" : "slurm " + options_.partition;
  }

  Result<void> kill(const SlotId&, const std::string& external_id) override {
    if (!slurm::is_job_id(external_id)) return invalid_id(external_id);
    auto answer = run(command("scancel", {external_id}));
    if (!answer) return fail("scancel: " + answer.error().message);
    if (answer->exit_code == 0 || slurm::invalid_job_id(answer->err) ||
        answer->err.find("already completed") != std::string::npos) {
      return {};  // killing an ended (or forgotten) job is not an error
    }
    return fail(fmt::format("scancel {}: {}", external_id, slurm::one_line(answer->err)));
  }

  std::string describe() const override {
    std::string first = options_.script.substr(0, options_.script.find('\n'));
    if (first.starts_with("#!")) first = "script";
    first = clipped(first, 60);
    return options_.partition.empty() ? fmt::format("slurm \"{}\"", first)
                                      : fmt::format("slurm {} \"{}\"", options_.partition, first);
  }
  std::string_view kind() const override { return "slurm"; }

 private:
  ProcessRequest command(const std::string& program, std::vector<std::string> args) const {
    ProcessRequest request;
    request.argv.push_back(options_.slurm_bin.empty() ? program
                                                      : options_.slurm_bin + "/" + program);
    for (auto& arg : args) request.argv.push_back(std::move(arg));
    request.timeout = options_.timeout;
    return request;
  }

  // Runs a Slurm command, unless the controller did not answer a moment ago (then fails at once).
  Result<ProcessOutput> run(const ProcessRequest& request) {
    if (auto why = outages().down(endpoint_, options_.clock->monotonic())) {
      return fail(
          fmt::format("not asked: the Slurm controller did not answer a moment ago ({})", *why));
    }
    auto answer = runner_->run(request);
    if (!answer) {
      outages().trip(endpoint_, answer.error().message, pause_end());
    } else if (answer->exit_code != 0 && slurm::controller_unreachable(answer->err)) {
      outages().trip(endpoint_, slurm::one_line(answer->err), pause_end());
    } else {
      outages().clear(endpoint_);
    }
    return answer;
  }

  Clock::Monotonic pause_end() const { return options_.clock->monotonic() + options_.outage_pause; }

  static tl::unexpected<Error> invalid_id(const std::string& id) {
    return fail(fmt::format("\"{}\" is not a Slurm job id", id), ErrorCode::kInvalid);
  }

  // The input list files of JobInputs, named by variables the wrapper exports (the job
  // directory is named after the job id sbatch answers); a list too long for the environment
  // leaves `env` for them.
  static std::vector<slurm::JobDirVariable> input_list_variables(
      const SubmitContext& context, std::map<std::string, std::string>& env) {
    std::vector<slurm::JobDirVariable> out;
    for (const auto& [name, paths] : context.variables) {
      if (!name.starts_with("inputs.")) continue;
      const std::string env_name = input_env_name(name.substr(7));
      out.push_back({env_name + "_FILE", "", name});
      if (paths.size() > kInlineInputBytes) {
        env.erase(env_name);
        out.push_back({env_name, "@", name});
      }
    }
    return out;
  }

  Result<void> prepare_job_dir(const SlotId& slot, const std::string& dir,
                               const SubmitContext& context) const {
    std::error_code error;
    fs::create_directories(dir, error);
    if (error) return fail(fmt::format("cannot create job directory {}: {}", dir, error.message()));
    const JobInputs job = job_inputs(context, dir);
    for (const auto& [path, text] : job.files) {
      if (auto written = write_script(path, text); !written) return written;
    }
    return write_script(dir + "/script", slurm::job_script(replace_variables(
                                             replace_time_variables(options_.script, slot.time),
                                             job.context.variables)));
  }

  std::string job_dir(const Job& job) const {
    return slurm_slot_dir(options_.jobs_dir, job.slot) + "/" + job.external_id;
  }

  // The recorded exit status of a job's script, if it ended.
  std::optional<int> recorded_exit(const Job& job) const {
    auto text = read_small_file(job_dir(job) + "/exit");
    if (!text) return std::nullopt;
    try {
      return std::stoi(*text);
    } catch (const std::exception&) {
      return 1;
    }
  }

  ExternalStatus from_queue(const Job& job, const QueueEntry& entry) const;
  static ExternalStatus from_exit(const Job& job, int exit);
  ExternalStatus forgotten(const Job& job, const std::map<std::string, QueueEntry>& accounted,
                           bool accounting_answered) const;
  Result<std::map<std::string, QueueEntry>> squeue(const std::vector<Job>& jobs);
  std::optional<std::map<std::string, QueueEntry>> sacct(const std::vector<Job>& jobs);

  SlurmServiceOptions options_;
  ProcessRunnerPtr runner_;
  std::string endpoint_;
  std::atomic<bool> accounting_disabled_{false};
};

std::map<std::string, Result<void>> SlurmService::start_many(const std::vector<Job>& jobs) {
  std::map<std::string, Result<void>> results;
  std::vector<Job> valid;
  for (const auto& job : jobs) {
    if (slurm::is_job_id(job.external_id))
      valid.push_back(job);
    else
      results[job.external_id] = invalid_id(job.external_id);
  }
  if (valid.empty()) return results;
  auto answer = run(command("scontrol", {"release", join_ids(valid)}));
  const bool outage =
      !answer || (answer->exit_code != 0 && slurm::controller_unreachable(answer->err));
  const std::string why = !answer ? answer.error().message : slurm::one_line(answer->err);
  const auto complaints =
      answer ? slurm::per_job_complaints(answer->err) : std::map<std::string, std::string>{};
  for (const auto& job : valid) {
    auto& result = results[job.external_id];
    result = {};
    const auto complaint = complaints.find(job.external_id);
    if (outage) {
      result = fail("scontrol release: " + why);
    } else if (complaint != complaints.end() &&
               complaint->second.find("already finished") == std::string::npos &&
               complaint->second.find("not pending") == std::string::npos) {
      // Unknown to Slurm: the next status query decides what became of it.
      result = fail(fmt::format("scontrol release {}: {}", job.external_id, complaint->second));
    }
  }
  return results;
}

Result<std::map<std::string, QueueEntry>> SlurmService::squeue(const std::vector<Job>& jobs) {
  auto answer = run(command(
      "squeue", {"--noheader", "--states=all", "--jobs=" + join_ids(jobs), "--format=%i|%T|%r"}));
  if (!answer) return fail("squeue: " + answer.error().message);
  if (answer->exit_code == 0) return slurm::parse_queue(answer->out);
  // Every job asked about has left the queue (Slurm knows none of them).
  if (slurm::invalid_job_id(answer->err) && !slurm::controller_unreachable(answer->err)) {
    return std::map<std::string, QueueEntry>{};
  }
  return fail("squeue: " + slurm::one_line(answer->err));
}

// One sacct for the jobs that left the queue; nullopt when accounting cannot answer.
std::optional<std::map<std::string, QueueEntry>> SlurmService::sacct(const std::vector<Job>& jobs) {
  if (jobs.empty() || accounting_disabled_) return std::nullopt;
  auto answer = run(command("sacct", {"--noheader", "--parsable2", "--allocations",
                                      "--jobs=" + join_ids(jobs), "--format=JobID,State"}));
  if (!answer) return std::nullopt;
  if (answer->exit_code != 0) {
    if (answer->err.find("accounting storage is disabled") != std::string::npos) {
      accounting_disabled_ = true;  // the default of a small cluster: do not ask again
    }
    return std::nullopt;
  }
  return slurm::parse_queue(answer->out);
}

ExternalStatus SlurmService::from_queue(const Job& job, const QueueEntry& entry) const {
  const JobState state = slurm_job_state(entry.state);
  if (state == JobState::kRunning && entry.state == "PENDING" && entry.reason == "JobHeldUser") {
    return ExternalStatus::kSubmitted;  // submitted with --hold, not released yet
  }
  if (state != JobState::kFailure) return state;
  std::string message = fmt::format("Slurm job {} ended {}", job.external_id, entry.state);
  if (!entry.reason.empty() && entry.reason != "None") message += " (" + entry.reason + ")";
  if (auto exit = recorded_exit(job)) message += fmt::format(", exit status {}", *exit);
  return ExternalStatus(JobState::kFailure, message);
}

ExternalStatus SlurmService::from_exit(const Job& job, int exit) {
  if (exit == 0) return ExternalStatus::kSuccess;
  return ExternalStatus(JobState::kFailure,
                        fmt::format("Slurm job {} exited with status {}", job.external_id, exit));
}

// A job that left the queue without an exit record: accounting knows it, or nobody does.
ExternalStatus SlurmService::forgotten(const Job& job,
                                       const std::map<std::string, QueueEntry>& accounted,
                                       bool accounting_answered) const {
  if (auto found = accounted.find(job.external_id); found != accounted.end()) {
    return from_queue(job, found->second);
  }
  return ExternalStatus(
      JobState::kFailure,
      fmt::format("Slurm no longer knows job {} and it left no exit record in {}{}",
                  job.external_id, job_dir(job),
                  accounting_answered ? "" : " (no Slurm accounting to ask)"));
}

std::map<std::string, Result<ExternalStatus>> SlurmService::status_many(
    const std::vector<Job>& jobs) {
  std::map<std::string, Result<ExternalStatus>> results;
  std::vector<Job> valid;
  for (const auto& job : jobs) {
    if (slurm::is_job_id(job.external_id))
      valid.push_back(job);
    else
      results[job.external_id] = invalid_id(job.external_id);
  }
  if (valid.empty()) return results;
  auto queue = squeue(valid);
  if (!queue) {
    for (const auto& job : valid) results[job.external_id] = tl::unexpected(queue.error());
    return results;
  }
  std::vector<Job> gone;
  for (const auto& job : valid) {
    if (auto found = queue->find(job.external_id); found != queue->end()) {
      results[job.external_id] = from_queue(job, found->second);
    } else if (auto exit = recorded_exit(job)) {
      results[job.external_id] = from_exit(job, *exit);
    } else {
      gone.push_back(job);
    }
  }
  const auto accounted = sacct(gone);
  for (const auto& job : gone) {
    results[job.external_id] = forgotten(
        job, accounted.value_or(std::map<std::string, QueueEntry>{}), accounted.has_value());
  }
  return results;
}

}  // namespace

ExternalServicePtr make_slurm_external_service(SlurmServiceOptions options,
                                               ProcessRunnerPtr runner) {
  return std::make_shared<SlurmService>(std::move(options), std::move(runner));
}

}  // namespace celos
