// The watch-fed cache: JobCache with events in and answers out; KubeWatch and NamespaceCache
// against a scripted API server whose watch streams the test feeds line by line (a 410, a
// dropped connection, a stop while a stream is open). The real protocol is checked end to end
// against test/kubernetes/fake_kube_apiserver.py.
#include "io/kubernetes/kube_cache.h"

#include <deque>
#include <thread>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "io/kubernetes/kube_job.h"

using namespace celos;
using namespace celos::kube;
namespace json = boost::json;

namespace {

json::value job(const std::string& name, const std::string& uid, const std::string& status,
                bool suspended = false) {
  return json::parse(fmt::format(
      R"({{"metadata":{{"name":"{}","uid":"{}","resourceVersion":"7"}},"spec":{{"suspend":{}}},)"
      R"("status":{}}})",
      name, uid, suspended ? "true" : "false", status));
}

json::value pending_pod(const std::string& name, const std::string& job_name) {
  return json::parse(fmt::format(
      R"({{"metadata":{{"name":"{}","labels":{{"job-name":"{}"}}}},"status":{{"phase":"Pending",)"
      R"("conditions":[{{"type":"PodScheduled","status":"False","reason":"Unschedulable",)"
      R"("message":"0/3 nodes are available"}}]}}}})",
      name, job_name));
}

const char* kActive = R"({"active":1,"ready":0})";
const char* kComplete = R"({"conditions":[{"type":"Complete","status":"True"}],"succeeded":1})";

// Waits (real time, bounded) for `done`: the watch works on a thread of its own.
template <typename F>
bool eventually(F done) {
  for (int i = 0; i < 2000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

// An API server whose lists answer `items` and whose watch streams send what the test pushes.
class ScriptedKube : public HttpClient {
 public:
  Result<HttpResponse> send(const HttpRequest& request) override {
    MutexLock lock(mutex_);
    urls_.push_back(request.url);
    if (list_status_ != 200) return HttpResponse{list_status_, {}, R"({"message":"forbidden"})"};
    json::array list;
    for (const auto& item : items_) list.push_back(item);
    return HttpResponse{
        200,
        {},
        json::serialize(
            json::object{{"metadata", json::object{{"resourceVersion", rv_}}}, {"items", list}})};
  }

  // A watch: status 200, then the pushed lines until the test ends or drops it, or a cancel.
  Result<HttpResponse> stream(const HttpRequest& request,
                              const HttpStreamOptions& options) override {
    if (request.url.find("watch=1") == std::string::npos)
      return HttpClient::stream(request, options);
    // The cancel's waker only sets this stream's flag (under this client's lock): the stream
    // never asks the HttpCancel while holding that lock, which cancel() takes second.
    auto cancelled = std::make_shared<bool>(false);
    if (!options.cancel->set_waker([this, cancelled] {
          MutexLock lock(mutex_);
          *cancelled = true;
          moved_.notify_all();
        })) {
      return fail("cancelled", ErrorCode::kUnavailable);
    }
    {
      MutexLock lock(mutex_);
      urls_.push_back(request.url);
      ++open_;
    }
    options.on_status(200);
    Result<HttpResponse> result = HttpResponse{200, {}, ""};
    for (;;) {
      MutexLock lock(mutex_);
      if (*cancelled || (lines_.empty() && end_ == End::kDrop)) {
        result = fail("connection dropped", ErrorCode::kUnavailable);
        end_ = End::kNone;
        break;
      }
      if (lines_.empty()) {  // the lines pushed before a drop are read first
        moved_.wait(mutex_);
        continue;
      }
      const std::string line = lines_.front() + "\n";
      lines_.pop_front();
      lock.unlock();
      if (!options.on_data(line)) break;
    }
    options.cancel->set_waker({});
    MutexLock lock(mutex_);
    --open_;
    return result;
  }

  void push(const std::string& line) {
    MutexLock lock(mutex_);
    lines_.push_back(line);
    moved_.notify_all();
  }
  void drop() {
    MutexLock lock(mutex_);
    end_ = End::kDrop;
    moved_.notify_all();
  }
  void set_items(std::vector<json::value> items, std::string rv) {
    MutexLock lock(mutex_);
    items_ = std::move(items);
    rv_ = std::move(rv);
  }
  void set_list_status(int status) {
    MutexLock lock(mutex_);
    list_status_ = status;
  }
  int open() {
    MutexLock lock(mutex_);
    return open_;
  }
  std::vector<std::string> urls() {
    MutexLock lock(mutex_);
    return urls_;
  }

 private:
  enum class End { kNone, kDrop };

  Mutex mutex_;
  CondVar moved_;
  std::deque<std::string> lines_ GUARDED_BY(mutex_);
  End end_ GUARDED_BY(mutex_) = End::kNone;
  std::vector<json::value> items_ GUARDED_BY(mutex_);
  std::string rv_ GUARDED_BY(mutex_) = "10";
  int open_ GUARDED_BY(mutex_) = 0;
  int list_status_ GUARDED_BY(mutex_) = 200;
  std::vector<std::string> urls_ GUARDED_BY(mutex_);
};

std::shared_ptr<KubeApi> api_for(std::shared_ptr<HttpClient> http, Clock& clock) {
  KubernetesServiceOptions options;
  options.namespace_ = "etl";
  options.clock = &clock;
  KubeCredentials credentials;
  credentials.server = "http://kube";
  return std::make_shared<KubeApi>(options, credentials, std::move(http));
}

std::string event(const std::string& type, const json::value& object) {
  return json::serialize(json::object{{"type", type}, {"object", object}});
}

}  // namespace

TEST_CASE("the cache answers from events: status, the pod's reason, deletion") {
  JobCache cache("etl");
  cache.replace_jobs({job("a", "u1", kActive), job("b", "u2", kComplete)});
  cache.replace_pods({pending_pod("a-x1", "a")});
  CHECK(cache.answer("a").value() ==
        ExternalStatus(JobState::kRunning, "pod a-x1 is Unschedulable: 0/3 nodes are available"));
  CHECK(cache.answer("b").value() == JobState::kSuccess);
  CHECK_FALSE(cache.answer("c"));  // not in the cache: the service asks the server
  cache.apply_pod("DELETED", pending_pod("a-x1", "a"));  // scheduled: left phase Pending
  CHECK(cache.answer("a").value() == ExternalStatus(JobState::kRunning));
  cache.apply_job("MODIFIED", job("a", "u1", kComplete));
  CHECK(cache.answer("a").value() == JobState::kSuccess);
  cache.apply_job("DELETED", job("a", "u1", kComplete));
  CHECK_FALSE(cache.answer("a"));
  CHECK(cache.jobs() == 1);
}

TEST_CASE("a Job celos created or resumed is not answered until the cache shows it") {
  JobCache cache("etl");
  cache.replace_jobs({job("a", "old", kComplete)});  // an earlier Job of the same name
  cache.note_created("a", "new");
  CHECK_FALSE(cache.answer("a"));
  cache.apply_job("DELETED", job("a", "old", kComplete));
  cache.apply_job("ADDED", job("a", "new", "{}", /*suspended=*/true));
  CHECK(cache.answer("a").value() == JobState::kSubmitted);
  cache.note_resumed("a");
  CHECK_FALSE(cache.answer("a"));  // the watch has not shown the resume yet
  cache.apply_job("MODIFIED", job("a", "new", kActive));
  CHECK(cache.answer("a").value() == JobState::kRunning);
  CHECK(cache.awaited() == 0);
  // Created, then deleted before the cache saw it: asked for, and forgotten after the 404.
  cache.note_created("b", "u3");
  CHECK_FALSE(cache.answer("b"));
  cache.forget("b");
  CHECK(cache.awaited() == 0);
  // A relist that shows the change settles it too.
  cache.note_created("c", "u4");
  cache.replace_jobs({job("c", "u4", kActive)});
  CHECK(cache.awaited() == 0);
}

namespace {
// The jobs a watch's handlers were told of: name -> uid.
struct SeenJobs {
  Mutex mutex;
  std::map<std::string, std::string> jobs GUARDED_BY(mutex);

  std::map<std::string, std::string> copy() {
    MutexLock lock(mutex);
    return jobs;
  }
  WatchHandlers handlers() {
    return {[this](std::vector<json::value> items) {
              MutexLock lock(mutex);
              jobs.clear();
              for (const auto& item : items) jobs[name_of(item)] = uid_of(item);
            },
            [this](std::string_view type, const json::value& object) {
              MutexLock lock(mutex);
              if (type == "DELETED") {
                jobs.erase(name_of(object));
              } else {
                jobs[name_of(object)] = uid_of(object);
              }
            }};
  }
};
}  // namespace

TEST_CASE("a watch lists, follows events, relists after a 410, rewatches after a drop") {
  ManualClock clock;
  auto kube = std::make_shared<ScriptedKube>();
  kube->set_items({job("a", "u1", kActive)}, "10");
  SeenJobs seen;
  KubeWatch watch(api_for(kube, clock), "/apis/batch/v1/namespaces/etl/jobs",
                  "labelSelector=celos.workflow", seen.handlers(), clock);
  CHECK_FALSE(watch.live());
  watch.start();
  REQUIRE(eventually([&] { return watch.live(); }));
  CHECK(seen.copy() == std::map<std::string, std::string>{{"a", "u1"}});
  CHECK(kube->urls().back().find("watch=1&resourceVersion=10&allowWatchBookmarks=true") !=
        std::string::npos);

  kube->push(event("ADDED", job("b", "u2", kActive)));
  kube->push(event("DELETED", job("a", "u1", kActive)));
  REQUIRE(eventually([&] {
    return seen.copy() == std::map<std::string, std::string>{{"b", "u2"}};
  }));
  kube->push(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"42"}}})");

  // The history is gone: the watch lists again, then watches from the new list.
  kube->set_items({job("c", "u3", kActive)}, "50");
  kube->push(R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})");
  REQUIRE(eventually([&] { return watch.lists() == 2 && watch.live(); }));
  CHECK(seen.copy() == std::map<std::string, std::string>{{"c", "u3"}});
  CHECK(kube->urls().back().find("resourceVersion=50") != std::string::npos);

  // A dropped connection: not live (the service lists), a back-off on the clock, then a watch
  // from the last resourceVersion seen (no list).
  kube->push(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"57"}}})");
  REQUIRE(eventually([&] { return kube->open() == 1; }));
  const int watches = watch.watches();
  kube->drop();
  REQUIRE(eventually([&] { return !watch.live() && clock.sleepers() > 0; }));
  CHECK(watch.watches() == watches);  // waiting out the back-off
  clock.advance(std::chrono::seconds(1));
  REQUIRE(eventually([&] { return watch.live(); }));
  CHECK(watch.watches() == watches + 1);
  CHECK(watch.lists() == 2);
  CHECK(kube->urls().back().find("resourceVersion=57") != std::string::npos);
  // Destroyed with its stream open: the cancel ends it (the scope's end must not hang).
}

TEST_CASE("the namespace cache answers only while both watches are live") {
  ManualClock clock;
  auto kube = std::make_shared<ScriptedKube>();
  kube->set_items({job("a", "u1", kComplete)}, "10");
  NamespaceCache cache(api_for(kube, clock), "etl", clock);
  const ExternalService::Job a{SlotId{"wc", Time{}}, "etl/a"};
  const ExternalService::Job gone{SlotId{"wc", Time{}}, "etl/gone"};
  REQUIRE(cache.wait_live(clock, std::chrono::hours(1)));  // the first step's wait
  std::map<std::string, Result<ExternalStatus>> results;
  std::vector<const ExternalService::Job*> ask;
  REQUIRE(cache.answer({&a, &gone}, results, ask));
  CHECK(results.at("etl/a").value() == JobState::kSuccess);
  CHECK(ask == std::vector<const ExternalService::Job*>{&gone});
  kube->drop();  // one of the two streams
  REQUIRE(eventually([&] { return !cache.live(); }));
  results.clear();
  CHECK_FALSE(cache.answer({&a}, results, ask));
  CHECK(results.empty());
}

TEST_CASE("waiting for a new cache ends early when its list fails") {
  ManualClock clock;  // never advanced: only the failure can end the wait
  auto kube = std::make_shared<ScriptedKube>();
  kube->set_list_status(403);
  NamespaceCache cache(api_for(kube, clock), "etl", clock);
  CHECK_FALSE(cache.wait_live(clock, std::chrono::hours(1)));
  CHECK_FALSE(cache.live());
}
