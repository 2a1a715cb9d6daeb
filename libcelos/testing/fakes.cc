#include "testing/fakes.h"

#include <stdexcept>

#include <fmt/format.h>

namespace celos::testing {

// ---- FakeExternalService

Result<void> FakeExternalService::check_reachable(const std::string& call) {
  calls_.push_back(call);
  if (down_) return fail("fake service down");
  if (unreachable_) return fail("fake service: connection refused", ErrorCode::kUnavailable);
  return {};
}

Result<std::string> FakeExternalService::submit(const SlotId& slot) {
  MutexLock lock(mutex_);
  if (throws_) throw std::runtime_error("fake service bug");
  if (auto ok = check_reachable("submit " + to_string(slot)); !ok)
    return tl::unexpected(ok.error());
  if (refuses_) return fail("fake service refuses the job: invalid partition", ErrorCode::kInvalid);
  submitted.push_back(slot);
  std::string id = fmt::format("job-{}", next_id_++);
  statuses[id] = ExternalStatus::kRunning;
  return id;
}

Result<void> FakeExternalService::start(const SlotId& slot, const std::string& external_id) {
  if (on_start) on_start(slot, external_id);
  MutexLock lock(mutex_);
  if (auto ok = check_reachable("start " + external_id); !ok) return ok;
  started.push_back(external_id);
  return {};
}

Result<ExternalStatus> FakeExternalService::status(const SlotId&, const std::string& external_id) {
  MutexLock lock(mutex_);
  if (auto ok = check_reachable("status " + external_id); !ok) return tl::unexpected(ok.error());
  auto it = statuses.find(external_id);
  if (it == statuses.end()) return fail("unknown job " + external_id);
  return it->second;
}

Result<void> FakeExternalService::kill(const SlotId&, const std::string& external_id) {
  MutexLock lock(mutex_);
  if (auto ok = check_reachable("kill " + external_id); !ok) return ok;
  killed.push_back(external_id);
  statuses[external_id] = ExternalStatus::kFailure;
  return {};
}

void FakeExternalService::set_status(const std::string& external_id, ExternalStatus status) {
  MutexLock lock(mutex_);
  statuses[external_id] = status;
}

std::vector<std::string> FakeExternalService::calls() const {
  MutexLock lock(mutex_);
  return calls_;
}

// ---- MemFileSystem

namespace {
std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}
bool is_under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         (dir == "/" || path[dir.size()] == '/');
}
// Where the keys under dir start in a sorted container: they all begin with dir + "/", so a
// listing walks only them (a walk of every key made benches over 100,000 slot files quadratic).
std::string children_prefix(const std::string& dir) { return dir == "/" ? dir : dir + "/"; }
}  // namespace

Result<bool> MemFileSystem::exists(const std::string& path) {
  MutexLock lock(mutex_);
  ++exists_calls_;
  if (down_) return fail("mem fs down: exists " + path);
  if (files_.count(path) || dirs_.count(path)) return true;
  auto it = files_.lower_bound(children_prefix(path));
  return it != files_.end() && is_under(it->first, path);
}

Result<std::string> MemFileSystem::read(const std::string& path) {
  MutexLock lock(mutex_);
  if (down_) return fail("mem fs down: read " + path);
  auto it = files_.find(path);
  if (it == files_.end()) return fail("no such file: " + path, ErrorCode::kNotFound);
  return it->second;
}

Result<void> MemFileSystem::write_files(const std::vector<FileWrite>& files) {
  MutexLock lock(mutex_);
  if (down_) return fail("mem fs down: write");
  for (const FileWrite& f : files) {
    ++writes_;
    if (fail_at_ > 0 && writes_ == fail_at_) return fail("injected failure writing " + f.path);
    if (!fail_under_.empty() && f.path.rfind(fail_under_, 0) == 0) {
      return fail("injected failure writing under " + fail_under_ + ": " + f.path);
    }
    files_[f.path] = f.data;
    touch_parent(f.path);
    for (std::string d = parent_of(f.path); d != "/"; d = parent_of(d)) dirs_.insert(d);
  }
  return {};
}

Result<void> MemFileSystem::make_dirs(const std::string& path) {
  MutexLock lock(mutex_);
  if (down_) return fail("mem fs down: mkdirs " + path);
  for (std::string d = path; d != "/" && !d.empty(); d = parent_of(d)) dirs_.insert(d);
  return {};
}

Result<void> MemFileSystem::remove(const std::string& path) {
  MutexLock lock(mutex_);
  if (down_) return fail("mem fs down: remove " + path);
  files_.erase(path);
  dirs_.erase(path);
  touch_parent(path);
  std::erase_if(files_, [&](const auto& kv) { return is_under(kv.first, path); });
  std::erase_if(dirs_, [&](const std::string& d) { return is_under(d, path); });
  return {};
}

Result<void> MemFileSystem::rename(const std::string& from, const std::string& to) {
  MutexLock lock(mutex_);
  if (down_) return fail("mem fs down: rename " + from);
  std::map<std::string, std::string> moved;
  for (auto it = files_.begin(); it != files_.end();) {
    if (it->first == from || is_under(it->first, from)) {
      moved[to + it->first.substr(from.size())] = it->second;
      it = files_.erase(it);
    } else {
      ++it;
    }
  }
  std::set<std::string> moved_dirs;
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (*it == from || is_under(*it, from)) {
      moved_dirs.insert(to + it->substr(from.size()));
      it = dirs_.erase(it);
    } else {
      ++it;
    }
  }
  if (moved.empty() && moved_dirs.empty()) {
    return fail("no such file: " + from, ErrorCode::kNotFound);
  }
  for (auto& [p, d] : moved) files_[p] = d;
  touch_parent(from);
  touch_parent(to);
  dirs_.insert(moved_dirs.begin(), moved_dirs.end());
  return {};
}

Result<std::vector<FileStatus>> MemFileSystem::list(const std::string& directory) {
  MutexLock lock(mutex_);
  ++list_calls_;
  if (down_) return fail("mem fs down: list " + directory);
  std::map<std::string, FileStatus> entries;
  const std::string prefix = children_prefix(directory);
  for (auto it = files_.lower_bound(prefix); it != files_.end() && is_under(it->first, directory);
       ++it) {
    const auto& [p, data] = *it;
    if (parent_of(p) == directory) entries[p] = {p.substr(p.rfind('/') + 1), false, data.size(), 0};
  }
  for (auto it = dirs_.lower_bound(prefix); it != dirs_.end() && is_under(*it, directory); ++it) {
    const std::string& d = *it;
    if (parent_of(d) == directory) {
      auto v = dir_versions_.find(d);
      entries[d] = {d.substr(d.rfind('/') + 1), true, 0, v == dir_versions_.end() ? 0 : v->second};
    }
  }
  if (entries.empty() && !dirs_.count(directory)) {
    return fail("no such directory: " + directory, ErrorCode::kNotFound);
  }
  std::vector<FileStatus> out;
  for (auto& [_, s] : entries) out.push_back(s);
  return out;
}

void MemFileSystem::touch_parent(const std::string& path) {
  dir_versions_[parent_of(path)] = ++version_;
}

std::map<std::string, std::string> MemFileSystem::files() const {
  MutexLock lock(mutex_);
  return files_;
}

// ---- FakeFileSystemResolver

Result<std::shared_ptr<FileSystem>> FakeFileSystemResolver::resolve(std::string_view uri) {
  auto it = by_uri_.find(uri);
  return it == by_uri_.end() ? fallback_ : it->second;
}

// ---- FakeHttpClient

Result<HttpResponse> FakeHttpClient::send(const HttpRequest& request) {
  requests.push_back(request);
  for (const Handler& h : handlers_) {
    if (auto response = h(request)) return *response;
  }
  return HttpResponse{404, {}, "not found"};
}

}  // namespace celos::testing
