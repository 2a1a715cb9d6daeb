// A list and a watch of one Kubernetes collection (kube_watch.h).
#include "io/kubernetes/kube_watch.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "io/kubernetes/kube_job.h"

namespace celos::kube {
namespace {

namespace json = boost::json;

constexpr auto kFirstBackOff = std::chrono::milliseconds(500);
constexpr auto kLastBackOff = std::chrono::milliseconds(30000);
constexpr int kMaxPages = 10000;
// Bound of one page of a list (a watch's bound is its timeoutSeconds and 30 s more).
constexpr auto kListTimeout = std::chrono::minutes(2);

std::string watch_string_at(const json::value& value, std::initializer_list<const char*> path) {
  const json::value* at = &value;
  for (const char* key : path) {
    at = at->is_object() ? at->as_object().if_contains(key) : nullptr;
    if (at == nullptr) return "";
  }
  return at->is_string() ? std::string(at->as_string()) : "";
}

}  // namespace

KubeWatch::KubeWatch(std::shared_ptr<KubeApi> api, std::string path, std::string selector,
                     WatchHandlers handlers, Clock& clock)
    : api_(std::move(api)),
      path_(std::move(path)),
      selector_(std::move(selector)),
      handlers_(std::move(handlers)),
      clock_(clock) {}

KubeWatch::~KubeWatch() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  cancel_->cancel();
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void KubeWatch::start() {
  thread_ = std::thread([this] { run(); });
}

bool KubeWatch::live() const {
  MutexLock lock(mutex_);
  return synced_ && connected_;
}

bool KubeWatch::failing() const {
  MutexLock lock(mutex_);
  return failing_;
}

int KubeWatch::lists() const {
  MutexLock lock(mutex_);
  return lists_;
}

int KubeWatch::watches() const {
  MutexLock lock(mutex_);
  return watches_;
}

bool KubeWatch::stopping() const {
  MutexLock lock(mutex_);
  return stopping_;
}

void KubeWatch::set_connected(bool connected) {
  MutexLock lock(mutex_);
  connected_ = connected;
  if (connected && failing_) {
    failing_ = false;
    spdlog::info("Kubernetes watch of {}: following the server again", path_);
  }
}

void KubeWatch::failed(const std::string& why) {
  MutexLock lock(mutex_);
  if (stopping_ || failing_) return;
  failing_ = true;
  spdlog::warn("Kubernetes watch of {}: {}; status steps list instead until it is back", path_,
               why);
}

bool KubeWatch::back_off(int failures) {
  auto wait = kFirstBackOff * (1 << std::min(failures - 1, 6));
  wait = std::min<std::chrono::milliseconds>(wait, kLastBackOff);
  MutexLock lock(mutex_);
  const auto deadline = clock_.monotonic() + wait;
  while (!stopping_ && clock_.wait_until(wake_, mutex_, deadline)) {
  }
  return !stopping_;
}

void KubeWatch::run() {
  std::string rv;
  int failures = 0;
  while (!stopping()) {
    if (rv.empty()) {
      auto listed = list();
      if (!listed) {
        failed(listed.error().message);
        if (!back_off(++failures)) return;
        continue;
      }
      rv = *listed;
    }
    bool progressed = false;
    const End end = watch(rv, progressed);
    set_connected(false);
    if (end == End::kStopped) return;
    if (end == End::kExpired) {
      MutexLock lock(mutex_);
      synced_ = false;
      rv.clear();
    }
    failures = progressed ? 0 : failures;
    // A stream that ends at once without news, again and again, waits as a failure does.
    if (end == End::kFailed || !progressed) {
      if (!back_off(++failures)) return;
    }
  }
}

Result<std::string> KubeWatch::list() {
  {
    MutexLock lock(mutex_);
    ++lists_;
  }
  std::vector<json::value> items;
  std::string token, rv;
  for (int pages = 0; pages < kMaxPages; ++pages) {
    std::string body;
    HttpStreamOptions options;
    options.cancel = cancel_;
    options.timeout = kListTimeout;
    options.on_data = [&body](std::string_view data) {
      body.append(data);
      return true;
    };
    auto answer = api_->stream(
        path_ + "?" + selector_ + (token.empty() ? "" : "&continue=" + url_encode(token)), options);
    if (!answer) return tl::unexpected(answer.error());
    if (answer->status == 410 && !token.empty()) {  // the continue token expired: start over
      items.clear(), token.clear(), rv.clear();
      continue;
    }
    if (answer->status != 200) return tl::unexpected(api_->error_of(*answer, "listing " + path_));
    boost::system::error_code ec;
    json::value page = json::parse(body, ec);
    if (ec || !page.is_object()) return fail("listing " + path_ + ": the answer is not JSON");
    if (json::value* got = page.as_object().if_contains("items"); got && got->is_array()) {
      for (json::value& item : got->as_array()) items.push_back(std::move(item));
    }
    if (rv.empty()) rv = watch_string_at(page, {"metadata", "resourceVersion"});
    token = watch_string_at(page, {"metadata", "continue"});
    if (token.empty()) {
      if (rv.empty()) return fail("listing " + path_ + ": the list has no resourceVersion");
      handlers_.replace(std::move(items));
      MutexLock lock(mutex_);
      synced_ = true;
      return rv;
    }
  }
  return fail("listing " + path_ + ": too many pages");
}

KubeWatch::End KubeWatch::watch(std::string& rv, bool& progressed) {
  {
    MutexLock lock(mutex_);
    ++watches_;
  }
  std::string buffer;
  std::optional<End> end;
  HttpStreamOptions options;
  options.cancel = cancel_;
  options.timeout = std::chrono::seconds(kWatchSeconds + 30);
  options.on_status = [this](int status) {
    if (status == 200) set_connected(true);
  };
  options.on_data = [&](std::string_view data) {
    buffer.append(data);
    std::size_t start = 0;
    for (std::size_t nl; !end && (nl = buffer.find('\n', start)) != std::string::npos;) {
      end = event(std::string_view(buffer).substr(start, nl - start), rv, progressed);
      start = nl + 1;
    }
    buffer.erase(0, start);
    return !end;
  };
  auto answer = api_->stream(fmt::format("{}?{}&watch=1&resourceVersion={}&allowWatchBookmarks="
                                         "true&timeoutSeconds={}",
                                         path_, selector_, url_encode(rv), kWatchSeconds),
                             options);
  if (stopping()) return End::kStopped;
  if (!answer) {
    failed(answer.error().message);
    return End::kFailed;
  }
  if (answer->status == 410) return End::kExpired;
  if (answer->status != 200) {
    failed(api_->error_of(*answer, "watching " + path_).message);
    return End::kFailed;
  }
  return end.value_or(End::kEnded);
}

// One line of the stream: an event applied, a bookmark's resourceVersion kept, or the end.
std::optional<KubeWatch::End> KubeWatch::event(std::string_view line, std::string& rv,
                                               bool& progressed) {
  if (line.find_first_not_of(" \r\t") == std::string_view::npos) return std::nullopt;
  boost::system::error_code ec;
  const json::value parsed = json::parse(line, ec);
  const json::value* object =
      !ec && parsed.is_object() ? parsed.as_object().if_contains("object") : nullptr;
  const std::string type = ec ? "" : watch_string_at(parsed, {"type"});
  if (object == nullptr || type.empty()) {
    failed(fmt::format("the watch sent a line that is not an event: {}",
                       line.substr(0, std::min<std::size_t>(line.size(), 200))));
    return End::kFailed;
  }
  if (type == "ERROR") {
    const json::value* code =
        object->is_object() ? object->as_object().if_contains("code") : nullptr;
    if (code && code->is_int64() && code->as_int64() == 410) return End::kExpired;
    failed("the watch ended with an error: " + status_message(json::serialize(*object)));
    return End::kFailed;
  }
  if (type != "BOOKMARK" && type != "ADDED" && type != "MODIFIED" && type != "DELETED") {
    failed("the watch sent an event of unknown type " + type);
    return End::kFailed;
  }
  if (type != "BOOKMARK") handlers_.apply(type, *object);
  const std::string at = watch_string_at(*object, {"metadata", "resourceVersion"});
  if (!at.empty()) rv = at;
  progressed = true;
  return std::nullopt;
}

}  // namespace celos::kube
