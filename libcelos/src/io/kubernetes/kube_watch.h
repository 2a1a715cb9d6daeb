// One collection of a Kubernetes API server (the celos Jobs of a namespace, or their Pending
// pods) followed as client-go's reflector follows one: a list, then a watch from the list's
// resourceVersion (?watch=1&allowWatchBookmarks=true, a stream of JSON lines) on a thread of
// its own, every event handed to the owner. A stream that ends (timeoutSeconds) or drops is
// watched again from the last resourceVersion seen (events and bookmarks move it); a 410
// (an answer or an ERROR event: that history is gone) lists again. Failures wait a back-off
// on the Clock (0.5 s doubling to 30 s). live() says whether the owner's copy follows the server
// now (listed and the stream open); while it does not, the owner asks the server itself.
// Private to io/kubernetes/.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "celos/clock.h"
#include "celos/http_client.h"
#include "celos/mutex.h"
#include "io/kubernetes/kube_api.h"

namespace celos::kube {

// What the watch does with what it reads; called on the watch's thread, one call at a time.
struct WatchHandlers {
  // A list's items: all there is now (at the start, after a 410).
  std::function<void(std::vector<boost::json::value> items)> replace;
  // One change: "ADDED", "MODIFIED" or "DELETED", and the object.
  std::function<void(std::string_view type, const boost::json::value& object)> apply;
};

class KubeWatch {
 public:
  // `path` is a collection (/apis/batch/v1/namespaces/NS/jobs), `selector` its query
  // (labelSelector=...&fieldSelector=..., URL-encoded). Call start() once the handlers may be
  // called.
  KubeWatch(std::shared_ptr<KubeApi> api, std::string path, std::string selector,
            WatchHandlers handlers, Clock& clock);
  // Stops: the stream or list in flight is cancelled, a back-off ended, the thread joined.
  ~KubeWatch();
  KubeWatch(const KubeWatch&) = delete;
  KubeWatch& operator=(const KubeWatch&) = delete;

  void start();
  // Listed, and the watch's stream is open: the handlers have seen every change the server
  // has sent.
  bool live() const EXCLUDES(mutex_);
  // Its last list or watch failed, and no watch has been open since.
  bool failing() const EXCLUDES(mutex_);
  // Lists and watch requests made so far (tests).
  int lists() const EXCLUDES(mutex_);
  int watches() const EXCLUDES(mutex_);

  // The server ends a watch after this long (timeoutSeconds); the client gives it 30 s more.
  static constexpr int kWatchSeconds = 300;

 private:
  enum class End { kEnded, kExpired, kFailed, kStopped };

  void run();
  Result<std::string> list();  // all pages; returns the list's resourceVersion
  End watch(std::string& rv, bool& progressed);
  std::optional<End> event(std::string_view line, std::string& rv, bool& progressed);
  bool back_off(int failures) EXCLUDES(mutex_);  // false when stopping
  void failed(const std::string& why) EXCLUDES(mutex_);
  void set_connected(bool connected) EXCLUDES(mutex_);
  bool stopping() const EXCLUDES(mutex_);

  std::shared_ptr<KubeApi> api_;
  const std::string path_, selector_;
  WatchHandlers handlers_;
  Clock& clock_;
  std::shared_ptr<HttpCancel> cancel_ = std::make_shared<HttpCancel>();
  mutable Mutex mutex_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  bool synced_ GUARDED_BY(mutex_) = false;
  bool connected_ GUARDED_BY(mutex_) = false;
  bool failing_ GUARDED_BY(mutex_) = false;  // a failure was logged, its end not yet
  int lists_ GUARDED_BY(mutex_) = 0;
  int watches_ GUARDED_BY(mutex_) = 0;
  std::thread thread_;
};

}  // namespace celos::kube
