// The hot-reloading JavaScript workflow source (celos/workflow_loader.h).
//
// load() runs at the start of every scheduler step, so an unchanged directory must cost only a
// directory listing and a stat per file: each file's evaluation is cached with the (size,
// modification time) of the file and of every defaults file it imported, and only files whose
// stamps changed are evaluated again. Duplicate ids are resolved when the cached results are
// assembled (in file name order), so they never make a file's cache depend on another file.
#include "celos/workflow_loader.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <dirent.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "celos/clock.h"
#include "celos/mutex.h"
#include "celos/time_zone.h"
#include "js/js_api.h"
#include "js/js_heap.h"

namespace celos {
namespace {

// From this many files to evaluate, a load uses up to kLoadThreads threads.
constexpr std::size_t kParallelFiles = 64;
constexpr std::size_t kLoadThreads = 4;

struct Stamp {
  bool exists = false;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;  // also changes when a deploy renames a new file into place
  std::uint64_t inode = 0;
  friend bool operator==(const Stamp&, const Stamp&) = default;
};

Stamp stamp_of(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return {};
  const auto nanoseconds = [](const timespec& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
  };
  return Stamp{true, static_cast<std::int64_t>(info.st_size), nanoseconds(info.st_mtim),
               nanoseconds(info.st_ctim), static_cast<std::uint64_t>(info.st_ino)};
}

struct CachedFile {
  Stamp stamp;
  std::vector<std::pair<std::string, Stamp>> imports;  // defaults name, stamp when evaluated
  js::FileEvaluation evaluation;
};

bool is_workflow_file_name(const std::string& name) {
  // Hidden files are editor and deploy leftovers (`.#wordcount.js`, `.wordcount.js.swp`).
  return name.size() > 3 && name[0] != '.' && name.compare(name.size() - 3, 3, ".js") == 0;
}

void log_error(const LoadError& error) {
  spdlog::warn("workflow file {} line {}: {}", error.file, error.line, error.message);
}

// The load-time lint of schedules in local time (issue 26): fixed local times that the zone's
// transitions of the coming year skip or repeat, in a file that gave no explicit dst rule.
void log_schedule_warnings(const std::string& file, const js::FileEvaluation& evaluation) {
  const Time now = system_clock().now();
  for (const Workflow& workflow : evaluation.workflows) {
    if (!workflow.schedule) continue;
    for (const auto& warning : workflow.schedule->warnings(now, now + std::chrono::days(366))) {
      spdlog::warn("workflow file {}: workflow {}: {}", file, workflow.id, warning);
    }
  }
}

class JsWorkflowSource : public WorkflowSource {
 public:
  explicit JsWorkflowSource(WorkflowLoaderOptions options) {
    settings_.defaults_dir = options.defaults_dir;
    settings_.db_dir = options.db_dir;
    settings_.max_eval_time = options.max_eval_time;
    settings_.max_heap_bytes = options.max_heap_bytes;
    settings_.http = std::move(options.http);
    settings_.oozie_user = options.oozie_user;
    settings_.oozie_notification_url = options.oozie_notification_url;
    settings_.jobs_dir = options.jobs_dir;
    settings_.slurm_bin = options.slurm_bin;
    settings_.io_timeout = options.io_timeout;
    settings_.process_runner = std::move(options.process_runner);
    workflows_dir_ = std::move(options.workflows_dir);
    max_total_eval_time_ = options.max_total_eval_time;
    max_total_heap_bytes_ = options.max_total_heap_bytes;
  }

  WorkflowConfigPtr load() override {
    if (auto tzdata = refresh_tzdata()) {
      // Zones loaded by the cached evaluations keep the old rules: evaluate every file again.
      spdlog::info("tzdata changed from {} to {}: evaluating every workflow file again",
                   tzdata->before, tzdata->after);
      clear_cache();
    }
    std::string listing_error;
    const std::vector<std::string> names = list_workflow_files(listing_error);
    bool changed = !config_ || listing_error != listing_error_ || names.size() != cache_.size();
    listing_error_ = listing_error;

    std::map<std::string, Stamp> defaults_stamps;  // each defaults file stat'ed once per load
    std::map<std::string, CachedFile> next;
    // The real clock on purpose (also in budgeted_settings()): the budget bounds the real time
    // the evaluations take.
    const Clock::Monotonic started = system_clock().monotonic();
    if (!over_budget_.empty()) changed = true;  // the last load's budget errors may go
    over_budget_.clear();
    // The kept heaps' bytes, summed once and then kept up to date: summing them for every file
    // made a load of 10,000 files 100 million heap visits.
    std::size_t kept = 0;
    for (const auto& [other, file] : cache_) kept += heap_bytes(file);
    std::vector<Pending> pending;  // to evaluate, in name order
    for (const std::string& name : names) {
      const Stamp stamp = stamp_of(workflows_dir_ + "/" + name);
      if (!stamp.exists) continue;  // removed since the listing
      auto cached = cache_.find(name);
      if (cached != cache_.end() && cached->second.stamp == stamp &&
          imports_unchanged(cached->second, defaults_stamps)) {
        next.emplace(name, std::move(cached->second));
        continue;
      }
      changed = true;
      if (cached != cache_.end()) {
        kept -= heap_bytes(cached->second);
        cached->second = CachedFile{};  // its heap no longer counts
      }
      pending.push_back({name, stamp, std::nullopt, std::nullopt});
    }
    evaluate_all(pending, started, kept);
    for (Pending& p : pending) {
      if (p.refused) {
        log_error(*p.refused);
        over_budget_.push_back(std::move(*p.refused));  // not cached: tried again next load
      } else {
        next.emplace(p.name, std::move(*p.file));
      }
    }
    cache_ = std::move(next);
    if (!over_budget_.empty()) changed = true;
    if (!changed && config_) return config_;
    config_ = assemble();
    return config_;
  }

  void clear_cache() override {
    cache_.clear();
    config_.reset();
  }

 private:
  std::vector<std::string> list_workflow_files(std::string& error) {
    std::vector<std::string> names;
    DIR* dir = ::opendir(workflows_dir_.c_str());
    if (dir == nullptr) {
      error = fmt::format("cannot read the workflows directory {}: {}", workflows_dir_,
                          std::strerror(errno));
      return names;
    }
    while (const dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (!is_workflow_file_name(name)) continue;
      if (entry->d_type != DT_REG && entry->d_type != DT_UNKNOWN && entry->d_type != DT_LNK) {
        continue;
      }
      names.push_back(std::move(name));
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
  }

  bool imports_unchanged(const CachedFile& file, std::map<std::string, Stamp>& stamps) const {
    for (const auto& [name, stamp] : file.imports) {
      auto known = stamps.find(name);
      if (known == stamps.end()) {
        known =
            stamps.emplace(name, stamp_of(js::defaults_path(settings_.defaults_dir, name))).first;
      }
      if (!(known->second == stamp)) return false;
    }
    return true;
  }

  struct Pending {
    std::string name;
    Stamp stamp;
    std::optional<CachedFile> file;    // evaluated
    std::optional<LoadError> refused;  // over a total budget
  };

  // Evaluates the pending files, on a few threads when there are many (each file has its own
  // JavaScript heap; starting 10,000 files took seconds of one core, most of it building each
  // heap's built-ins). Each evaluation in flight reserves its heap limit from the total memory
  // budget, and a file starts beside others only when the whole per-file limit is left for it:
  // when the budget gets tight, files are evaluated one at a time, as before.
  void evaluate_all(std::vector<Pending>& pending, Clock::Monotonic started, std::size_t kept) {
    Mutex mutex;  // guards `reserved` and `kept` (locals: no GUARDED_BY)
    CondVar done;
    std::size_t reserved = 0;
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t i = next++; i < pending.size(); i = next++) {
        Pending& p = pending[i];
        MutexLock lock(mutex);
        auto settings = budgeted_settings(started, kept + reserved);
        // Alongside others only with the whole per-file limit; a tight budget goes one at a time.
        while (reserved > 0 && (!settings || settings->max_heap_bytes < settings_.max_heap_bytes)) {
          done.wait(mutex);
          settings = budgeted_settings(started, kept + reserved);
        }
        if (!settings) {
          p.refused = LoadError{p.name, 0, settings.error().message};
          continue;
        }
        reserved += settings->max_heap_bytes;
        lock.unlock();
        p.file = evaluate(p.name, p.stamp, *settings);
        lock.lock();
        reserved -= settings->max_heap_bytes;
        kept += heap_bytes(*p.file);
        done.notify_all();
      }
    };
    const std::size_t width =
        pending.size() < kParallelFiles
            ? 1
            : std::min<std::size_t>(kLoadThreads,
                                    std::max(1U, std::thread::hardware_concurrency()));
    std::vector<std::thread> threads;
    for (std::size_t t = 1; t < width; ++t) threads.emplace_back(work);
    work();
    for (std::thread& thread : threads) thread.join();
  }

  // The file's share of the totals (SPEC §15): the time left of this load's budget and the
  // memory the kept heaps leave; an error when nothing is left.
  static std::size_t heap_bytes(const CachedFile& file) {
    auto heap = file.evaluation.heap.lock();
    return heap ? heap->bytes_in_use() : 0;
  }

  Result<js::EvalSettings> budgeted_settings(Clock::Monotonic started, std::size_t kept) const {
    const auto spent =
        std::chrono::duration_cast<std::chrono::milliseconds>(system_clock().monotonic() - started);
    if (spent >= max_total_eval_time_) {
      return tl::unexpected(Error{fmt::format(
          "not evaluated: loading the workflow files used up the total time budget of {} ms; "
          "it is tried again at the next load",
          max_total_eval_time_.count())});
    }
    constexpr std::size_t kMinimumHeap = 1024 * 1024;
    if (kept + kMinimumHeap > max_total_heap_bytes_) {
      return tl::unexpected(Error{fmt::format(
          "not evaluated: the other workflow files' heaps use {} of the {} bytes allowed for "
          "all files together; it is tried again at the next load",
          kept, max_total_heap_bytes_)});
    }
    js::EvalSettings settings = settings_;
    settings.max_heap_bytes = std::min(settings.max_heap_bytes, max_total_heap_bytes_ - kept);
    settings.load_time_limit = max_total_eval_time_ - spent;
    return settings;
  }

  CachedFile evaluate(const std::string& name, const Stamp& stamp,
                      const js::EvalSettings& settings) {
    CachedFile file;
    file.stamp = stamp;
    std::ifstream in(workflows_dir_ + "/" + name, std::ios::binary);
    if (!in) {
      file.evaluation.errors.push_back(LoadError{name, 0, "cannot read the file"});
    } else {
      std::ostringstream text;
      text << in.rdbuf();
      file.evaluation = js::evaluate_workflow_file(settings, name, text.str());
    }
    for (const std::string& imported : file.evaluation.imported_defaults) {
      file.imports.emplace_back(imported,
                                stamp_of(js::defaults_path(settings_.defaults_dir, imported)));
    }
    for (const LoadError& error : file.evaluation.errors) log_error(error);
    log_schedule_warnings(name, file.evaluation);
    return file;
  }

  WorkflowConfigPtr assemble() const {
    auto config = std::make_shared<WorkflowConfig>();
    if (!listing_error_.empty()) {
      config->errors.push_back(LoadError{workflows_dir_, 0, listing_error_});
      spdlog::error("{}", listing_error_);
    }
    config->errors.insert(config->errors.end(), over_budget_.begin(), over_budget_.end());
    std::vector<DatasetDeclaration> datasets;
    std::vector<ServiceLimitDeclaration> limits;
    for (const auto& [name, file] : cache_) {
      const js::FileEvaluation& evaluation = file.evaluation;
      datasets.insert(datasets.end(), evaluation.datasets.begin(), evaluation.datasets.end());
      limits.insert(limits.end(), evaluation.service_limits.begin(),
                    evaluation.service_limits.end());
      config->errors.insert(config->errors.end(), evaluation.errors.begin(),
                            evaluation.errors.end());
      for (std::size_t i = 0; i < evaluation.workflows.size(); ++i) {
        const Workflow& workflow = evaluation.workflows[i];
        const Workflow* earlier = config->find(workflow.id);
        if (earlier != nullptr) {
          LoadError error{name, evaluation.lines[i],
                          fmt::format("duplicate workflow id \"{}\": already defined in {}",
                                      workflow.id, earlier->file)};
          log_error(error);
          config->errors.push_back(std::move(error));
          continue;
        }
        config->workflows.emplace(workflow.id, workflow);
      }
    }
    link_datasets(*config, datasets);
    const std::size_t known_errors = config->errors.size();
    link_service_limits(*config, limits);
    for (std::size_t i = known_errors; i < config->errors.size(); ++i) log_error(config->errors[i]);
    return config;
  }

  js::EvalSettings settings_;
  std::string workflows_dir_;
  std::chrono::milliseconds max_total_eval_time_{};
  std::size_t max_total_heap_bytes_ = 0;
  std::vector<LoadError> over_budget_;  // of the last load()
  std::map<std::string, CachedFile> cache_;
  std::string listing_error_;
  WorkflowConfigPtr config_;
};

}  // namespace

std::unique_ptr<WorkflowSource> make_js_workflow_source(WorkflowLoaderOptions options) {
  return std::make_unique<JsWorkflowSource>(std::move(options));
}

}  // namespace celos
