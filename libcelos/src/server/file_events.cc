// Local file events (server/file_events.h).
#include "server/file_events.h"

#include <filesystem>
#include <system_error>

#include <spdlog/spdlog.h>

#include "celos/file_system_wrapper.h"

namespace celos {
namespace {

// Notes the paths it finds missing; everything else is forwarded.
class NotingFileSystem final : public FileSystemWrapper {
 public:
  NotingFileSystem(std::shared_ptr<FileSystem> inner, LocalPathWatch& watch)
      : FileSystemWrapper(std::move(inner)), watch_(watch) {}

  Result<bool> exists(const std::string& path) override {
    auto answer = target().exists(path);
    if (answer && !*answer) watch_.note_missing(path);
    return answer;
  }
  // It must see each missing path, so the step asks exists() rather than listing.
  bool prefers_listing() const override { return false; }

 private:
  LocalPathWatch& watch_;
};

std::string watch_parent(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

// The nearest ancestor of `dir` (itself included) that is a directory now.
std::string existing_ancestor(std::string dir) {
  std::error_code error;
  while (dir != "/" && !std::filesystem::is_directory(dir, error)) dir = watch_parent(dir);
  return dir;
}

}  // namespace

LocalPathWatch::LocalPathWatch(FileSystemResolver& inner, std::string default_fs,
                               std::size_t max_dirs)
    : inner_(inner), default_fs_(std::move(default_fs)), max_dirs_(max_dirs) {
  auto watch = open_directory_watch(
      {.on_file = [this](const std::string& dir, const std::string&) { on_change(dir); },
       .on_overflow =
           [this] {
             spdlog::warn(
                 "file events: the inotify queue overflowed; stepping the workflows "
                 "that check local paths");
             on_change("");
           }});
  if (!watch) {
    spdlog::warn("file events off: {}", watch.error().message);
    return;
  }
  watch_ = std::move(*watch);
}

LocalPathWatch::~LocalPathWatch() { watch_.reset(); }

Result<std::shared_ptr<FileSystem>> LocalPathWatch::resolve(std::string_view uri) {
  auto fs = inner_.resolve(uri);
  if (!fs || !watch_ || !is_local(uri)) return fs;
  return std::shared_ptr<FileSystem>(std::make_shared<NotingFileSystem>(*fs, *this));
}

void LocalPathWatch::set_on_event(std::function<void()> on_event) {
  MutexLock lock(mutex_);
  on_event_ = std::move(on_event);
}

bool LocalPathWatch::is_local(std::string_view uri) const {
  return uri.empty() ? default_fs_ == "file" : uri.substr(0, 5) == "file:";
}

void LocalPathWatch::note_missing(const std::string& path) {
  const std::string parent = watch_parent(path);
  {
    MutexLock lock(mutex_);
    if (watched_for_.count(parent) > 0) return;  // the common case: no system call
    if (watched_.size() >= max_dirs_) {
      if (!full_logged_) {
        spdlog::warn(
            "file events: {} directories watched already; further paths are found by "
            "the periodic step",
            max_dirs_);
      }
      full_logged_ = true;
      return;
    }
  }
  const std::string dir = existing_ancestor(parent);
  MutexLock lock(mutex_);
  if (!watched_.count(dir)) {
    if (auto added = watch_->add(dir); !added) {
      spdlog::warn("file events: {}", added.error().message);
      return;
    }
    watched_.insert(dir);
  }
  watched_for_[parent] = dir;
}

std::size_t LocalPathWatch::watched() const {
  MutexLock lock(mutex_);
  return watched_.size();
}

void LocalPathWatch::on_change(const std::string& dir) {
  std::function<void()> on_event;
  {
    MutexLock lock(mutex_);
    // A directory created under `dir` may be a missing path's new nearest ancestor: look again.
    std::erase_if(watched_for_, [&](const auto& entry) { return entry.second == dir; });
    on_event = on_event_;
  }
  if (on_event) on_event();
}

}  // namespace celos
