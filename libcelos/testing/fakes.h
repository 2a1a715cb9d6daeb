// Fakes shared by the tests. Each records what it was asked so that scheduler stories can
// assert on the calls, and each can be told to fail.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "celos/external_service.h"
#include "celos/file_system.h"
#include "celos/http_client.h"
#include "celos/mutex.h"

namespace celos::testing {

// An external service whose jobs end when the test says so. Thread-safe (the step calls
// services of different workflows concurrently); read the recorded vectors between steps.
class FakeExternalService : public ExternalService {
 public:
  Result<std::string> submit(const SlotId& slot) override;
  Result<void> start(const SlotId& slot, const std::string& external_id) override;
  Result<ExternalStatus> status(const SlotId& slot, const std::string& external_id) override;
  Result<void> kill(const SlotId& slot, const std::string& external_id) override;
  std::string describe() const override { return "fake"; }
  std::string_view kind() const override { return kind_name; }
  std::string kind_name = "oozie";  // what kind() answers
  ServiceTraits traits() const override { return service_traits; }
  ServiceTraits service_traits;  // what traits() answers (default: an Oozie-like service)

  // Sets the status that status() reports for a job (default kRunning).
  void set_status(const std::string& external_id, ExternalStatus status);
  // The next calls fail with "service down" while set.
  void set_down(bool down) EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    down_ = down;
  }
  // submit() throws std::runtime_error while set (a bug in a service).
  void set_throws(bool throws) EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    throws_ = throws;
  }
  // submit() answers as a service that refuses the job (ErrorCode::kInvalid) while set.
  void set_refuses(bool refuses) EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    refuses_ = refuses;
  }
  // Calls fail as an unreachable endpoint (ErrorCode::kUnavailable) while set.
  void set_unreachable(bool unreachable) EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    unreachable_ = unreachable;
  }
  // Called at the start of every start() (e.g. to check that RUNNING is already stored).
  std::function<void(const SlotId&, const std::string&)> on_start;
  std::string endpoint() const override EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return endpoint_;
  }
  void set_endpoint(std::string endpoint) EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    endpoint_ = std::move(endpoint);
  }
  // Calls made, in order ("submit wf@...", "start job-1", "status job-1", "kill job-1").
  std::vector<std::string> calls() const;

  // Written under the lock; a test reads them between steps (no step running), so they say no
  // GUARDED_BY: a deliberate exception for the tests' convenience.
  std::vector<SlotId> submitted;     // in order
  std::vector<std::string> started;  // external ids
  std::vector<std::string> killed;   // external ids
  std::map<std::string, ExternalStatus> statuses;

 private:
  Result<void> check_reachable(const std::string& call) REQUIRES(mutex_);
  mutable Mutex mutex_;
  std::vector<std::string> calls_ GUARDED_BY(mutex_);
  std::string endpoint_ GUARDED_BY(mutex_);
  int next_id_ GUARDED_BY(mutex_) = 1;
  bool down_ GUARDED_BY(mutex_) = false;
  bool throws_ GUARDED_BY(mutex_) = false;
  bool refuses_ GUARDED_BY(mutex_) = false;
  bool unreachable_ GUARDED_BY(mutex_) = false;
};

// A file system in memory. Directories are implicit in file paths plus those made with
// make_dirs. fail_at_write(n) makes the n-th file write from now on (1-based, counted over all
// files of all write_files calls) fail, leaving earlier files of the batch written: the basis of
// the "fail at write n" loops. set_down() makes every call fail (HDFS down).
class MemFileSystem : public FileSystem {
 public:
  Result<bool> exists(const std::string& path) override;
  Result<std::string> read(const std::string& path) override;
  Result<void> write_files(const std::vector<FileWrite>& files) override;
  Result<void> make_dirs(const std::string& path) override;
  Result<void> remove(const std::string& path) override;
  Result<void> rename(const std::string& from, const std::string& to) override;
  Result<std::vector<FileStatus>> list(const std::string& directory) override;

  void fail_at_write(int n) EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    fail_at_ = n;
    writes_ = 0;
  }
  // Every write of a file under `prefix` fails (a stray file where a directory should be, a
  // full disk for one workflow) until called again with "".
  void fail_writes_under(std::string prefix) EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    fail_under_ = std::move(prefix);
  }
  void set_down(bool down) EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    down_ = down;
  }
  int exists_calls() const EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return exists_calls_;
  }
  int list_calls() const EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return list_calls_;
  }
  // Answers prefers_listing() (false unless set: a remote file system's stand-in).
  void set_prefers_listing(bool prefers) { prefers_listing_.store(prefers); }
  bool prefers_listing() const override { return prefers_listing_.load(); }
  std::map<std::string, std::string> files() const;

 private:
  mutable Mutex mutex_;
  std::map<std::string, std::string> files_ GUARDED_BY(mutex_);
  std::set<std::string> dirs_ GUARDED_BY(mutex_);
  // stands in for directory mtimes
  std::map<std::string, std::int64_t> dir_versions_ GUARDED_BY(mutex_);
  std::int64_t version_ GUARDED_BY(mutex_) = 0;
  void touch_parent(const std::string& path) REQUIRES(mutex_);
  int fail_at_ GUARDED_BY(mutex_) = 0;
  int writes_ GUARDED_BY(mutex_) = 0;
  std::string fail_under_ GUARDED_BY(mutex_);
  int exists_calls_ GUARDED_BY(mutex_) = 0;
  int list_calls_ GUARDED_BY(mutex_) = 0;
  std::atomic<bool> prefers_listing_{false};
  bool down_ GUARDED_BY(mutex_) = false;
};

// A resolver that hands out the given file systems by URI ("" and unknown URIs: `fallback`).
class FakeFileSystemResolver : public FileSystemResolver {
 public:
  explicit FakeFileSystemResolver(std::shared_ptr<FileSystem> fallback)
      : fallback_(std::move(fallback)) {}
  void add(std::string uri, std::shared_ptr<FileSystem> fs) { by_uri_[std::move(uri)] = fs; }
  Result<std::shared_ptr<FileSystem>> resolve(std::string_view uri) override;

 private:
  std::shared_ptr<FileSystem> fallback_;
  std::map<std::string, std::shared_ptr<FileSystem>, std::less<>> by_uri_;
};

// An HTTP client answering from a script: handlers are tried in order, the first that returns a
// response wins; unmatched requests get 404. Requests are recorded.
class FakeHttpClient : public HttpClient {
 public:
  using Handler = std::function<std::optional<Result<HttpResponse>>(const HttpRequest&)>;
  void on(Handler handler) { handlers_.push_back(std::move(handler)); }
  Result<HttpResponse> send(const HttpRequest& request) override;
  std::vector<HttpRequest> requests;

 private:
  std::vector<Handler> handlers_;
};

}  // namespace celos::testing
