// Data checks in bulk (model/data_checks.h).
#include "model/data_checks.h"

#include <string_view>

namespace celos::detail {

std::optional<std::pair<std::string, std::string>> split_plain_path(const std::string& path) {
  if (path.size() < 2 || path.front() != '/' || path.back() == '/') return std::nullopt;
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string_view part(path.data() + start, end - start);
    if (part.empty() || part == "." || part == "..") return std::nullopt;
    start = end + 1;
  }
  const std::size_t slash = path.rfind('/');
  return std::make_pair(slash == 0 ? std::string("/") : path.substr(0, slash),
                        path.substr(slash + 1));
}

void DirectoryListings::plan(const std::vector<PathKey>& paths) {
  std::map<PathKey, std::set<std::string>> by_dir;
  for (const auto& [uri, path] : paths) {
    if (auto split = split_plain_path(path)) by_dir[{uri, split->first}].insert(split->second);
  }
  for (auto& [dir, names] : by_dir) {
    if (names.size() >= kMinPathsToList) planned_.insert(dir);
  }
}

Result<bool> DirectoryListings::exists(const std::string& uri, FileSystem& fs,
                                       const std::string& path) {
  auto split = split_plain_path(path);
  if (split && planned_.count({uri, split->first}) > 0 && fs.prefers_listing()) {
    auto names = listing(uri, fs, split->first);
    if (!names) return tl::unexpected(names.error());
    if (*names) return (*names)->count(split->second) > 0;
  }
  ++calls_;
  return fs.exists(path);
}

Result<void> DirectoryListings::prefetch(const std::string& uri, FileSystem& fs,
                                         const std::string& dir) {
  if (planned_.count({uri, dir}) == 0 || !fs.prefers_listing()) return {};
  auto names = listing(uri, fs, dir);
  if (!names) return tl::unexpected(names.error());
  return {};
}

Result<DirectoryListings::Names> DirectoryListings::listing(const std::string& uri, FileSystem& fs,
                                                            const std::string& dir) {
  std::promise<Result<Names>> promise;
  {
    MutexLock lock(mutex_);
    const PathKey key{uri, dir};
    if (auto it = listings_.find(key); it != listings_.end()) {
      auto future = it->second;
      lock.unlock();
      return future.get();  // listed, or being listed by another task
    }
    listings_.emplace(key, promise.get_future().share());
  }
  Result<Names> names = list_names(uri, fs, dir);
  promise.set_value(names);
  return names;
}

Result<DirectoryListings::Names> DirectoryListings::list_names(const std::string& uri,
                                                               FileSystem& fs,
                                                               const std::string& dir) {
  if (memory_ != nullptr && memory_->too_big(uri, dir, now_)) return Names{};
  ++calls_;
  auto entries = fs.list(dir);
  if (!entries) {
    // Nothing is under a directory that does not exist; an unreachable file system fails the
    // paths as exists() would; any other refusal (a file, no permission) falls back to exists().
    if (entries.error().code == ErrorCode::kNotFound) {
      return Names(std::make_shared<const std::set<std::string>>());
    }
    if (entries.error().code == ErrorCode::kUnavailable) return tl::unexpected(entries.error());
    return Names{};
  }
  if (entries->size() > kMaxListedEntries && memory_ != nullptr) {
    memory_->note_too_big(uri, dir, now_);
  }
  auto names = std::make_shared<std::set<std::string>>();
  for (const FileStatus& e : *entries) names->insert(e.name);
  return Names(std::move(names));
}

}  // namespace celos::detail
