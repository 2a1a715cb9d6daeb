// The simulated file systems: one ordered map of paths (files with their content, and
// directories made explicitly), which every URI sees through a view that honours outages.
// Directories of files are implicit: `/a/b` exists when `/a/b/c` does.
#include <fmt/format.h>

#include "celos/file_system_wrapper.h"
#include "sim/services.h"

namespace celos::sim {
namespace {

std::string strip_slash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

class MemoryNamespace final : public FileSystem {
 public:
  Result<bool> exists(const std::string& raw) override {
    const std::string path = strip_slash(raw);
    MutexLock lock(mutex_);
    return files_.count(path) > 0 || under(dirs_, path) || under(files_, path);
  }

  Result<std::string> read(const std::string& path) override {
    MutexLock lock(mutex_);
    auto it = files_.find(strip_slash(path));
    if (it == files_.end()) return fail("no such file: " + path, ErrorCode::kNotFound);
    return it->second;
  }

  Result<void> write_files(const std::vector<FileWrite>& files) override {
    MutexLock lock(mutex_);
    for (const FileWrite& f : files) files_[strip_slash(f.path)] = f.data;
    return {};
  }

  Result<void> make_dirs(const std::string& path) override {
    MutexLock lock(mutex_);
    dirs_[strip_slash(path)];
    return {};
  }

  Result<void> remove(const std::string& raw) override {
    const std::string path = strip_slash(raw);
    MutexLock lock(mutex_);
    erase_tree(files_, path);
    erase_tree(dirs_, path);
    return {};
  }

  Result<void> rename(const std::string& from_raw, const std::string& to_raw) override {
    const std::string from = strip_slash(from_raw), to = strip_slash(to_raw);
    MutexLock lock(mutex_);
    if (files_.count(to) || under(files_, to)) {
      return fail(fmt::format("cannot rename {}: {} exists", from, to));
    }
    move_tree(files_, from, to);
    move_tree(dirs_, from, to);
    return {};
  }

  Result<std::vector<FileStatus>> list(const std::string& raw) override {
    const std::string dir = strip_slash(raw);
    MutexLock lock(mutex_);
    if (!dirs_.count(dir) && !under(dirs_, dir) && !under(files_, dir) && dir != "/") {
      return fail("no such directory: " + dir, ErrorCode::kNotFound);
    }
    std::map<std::string, FileStatus> entries;
    add_children(files_, dir, entries, false);
    add_children(dirs_, dir, entries, true);
    std::vector<FileStatus> out;
    for (auto& [_, status] : entries) out.push_back(std::move(status));
    return out;
  }

 private:
  using Tree = std::map<std::string, std::string, std::less<>>;

  static std::string prefix_of(const std::string& dir) { return dir == "/" ? dir : dir + "/"; }
  static bool under(const Tree& tree, const std::string& dir) {
    const std::string prefix = prefix_of(dir);
    auto it = tree.lower_bound(prefix);
    return it != tree.end() && it->first.compare(0, prefix.size(), prefix) == 0;
  }
  static void erase_tree(Tree& tree, const std::string& path) {
    tree.erase(path);
    const std::string prefix = prefix_of(path);
    auto it = tree.lower_bound(prefix);
    while (it != tree.end() && it->first.compare(0, prefix.size(), prefix) == 0) {
      it = tree.erase(it);
    }
  }
  static void move_tree(Tree& tree, const std::string& from, const std::string& to) {
    Tree moved;
    if (auto it = tree.find(from); it != tree.end()) moved[to] = std::move(it->second);
    const std::string prefix = prefix_of(from);
    for (auto it = tree.lower_bound(prefix);
         it != tree.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      moved[prefix_of(to) + it->first.substr(prefix.size())] = std::move(it->second);
    }
    erase_tree(tree, from);
    tree.merge(moved);
  }
  static void add_children(const Tree& tree, const std::string& dir,
                           std::map<std::string, FileStatus>& entries, bool dirs) {
    const std::string prefix = prefix_of(dir);
    for (auto it = tree.lower_bound(prefix);
         it != tree.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      const std::string rest = it->first.substr(prefix.size());
      const std::size_t slash = rest.find('/');
      const std::string name = rest.substr(0, slash);
      const bool directory = dirs || slash != std::string::npos;
      FileStatus& e = entries[name];
      e.name = name;
      e.is_directory = e.is_directory || directory;
      if (!directory) e.size = it->second.size();
    }
  }

  Mutex mutex_;
  Tree files_ GUARDED_BY(mutex_);
  Tree dirs_ GUARDED_BY(mutex_);  // made with make_dirs (values unused)
};

// One URI's view: every call fails while an outage covers the URI.
class OutageView final : public FileSystemWrapper {
 public:
  OutageView(std::shared_ptr<FileSystem> store, std::string uri, const Outages& outages)
      : FileSystemWrapper(std::move(store)), uri_(std::move(uri)), outages_(outages) {}

  Result<bool> exists(const std::string& path) override {
    if (auto down = check(); !down) return tl::unexpected(down.error());
    return target().exists(path);
  }
  Result<std::string> read(const std::string& path) override {
    if (auto down = check(); !down) return tl::unexpected(down.error());
    return target().read(path);
  }
  Result<void> write_files(const std::vector<FileWrite>& files) override {
    if (auto down = check(); !down) return down;
    return target().write_files(files);
  }
  Result<void> remove(const std::string& path) override {
    if (auto down = check(); !down) return down;
    return target().remove(path);
  }
  Result<std::vector<FileStatus>> list(const std::string& directory) override {
    if (auto down = check(); !down) return tl::unexpected(down.error());
    return target().list(directory);
  }

 private:
  Result<void> check() const {
    const std::string why = outages_.file_system_down(uri_);
    if (why.empty()) return {};
    return fail(
        fmt::format("file system {} unreachable: {}", uri_.empty() ? "(default)" : uri_, why),
        ErrorCode::kUnavailable);
  }
  std::string uri_;
  const Outages& outages_;
};

std::string outage_message(const OutageSpec& o) {
  return fmt::format("simulated outage ({}) until {}", o.field, format_time(o.to));
}

}  // namespace

std::string Outages::service_down(std::string_view kind, const std::string& endpoint) const {
  const Time now = clock_.now();
  for (const OutageSpec& o : specs_) {
    if (o.service.empty() || now < o.from || now >= o.to) continue;
    if (glob_match(o.service, std::string(kind)) || glob_match(o.service, endpoint)) {
      return outage_message(o);
    }
  }
  return "";
}

std::string Outages::file_system_down(const std::string& uri) const {
  const Time now = clock_.now();
  for (const OutageSpec& o : specs_) {
    if (o.file_system.empty() || now < o.from || now >= o.to) continue;
    if (glob_match(o.file_system, uri)) return outage_message(o);
  }
  return "";
}

SimFileSystems::SimFileSystems(const Outages& outages)
    : outages_(outages), store_(std::make_shared<MemoryNamespace>()) {}

SimFileSystems::~SimFileSystems() = default;

Result<std::shared_ptr<FileSystem>> SimFileSystems::resolve(std::string_view uri) {
  MutexLock lock(mutex_);
  auto it = views_.find(uri);
  if (it == views_.end()) {
    it = views_
             .emplace(std::string(uri),
                      std::make_shared<OutageView>(store_, std::string(uri), outages_))
             .first;
  }
  return it->second;
}

}  // namespace celos::sim
