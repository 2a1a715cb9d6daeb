#include "model/step_context.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace celos::detail {

template <class Key, class Compute>
Result<bool> StepTriggerContext::once(Cache<Key> StepTriggerContext::*cache, const Key& key,
                                      Compute&& compute) {
  std::promise<Result<bool>> promise;
  {
    MutexLock lock(mutex_);
    if (auto it = (this->*cache).find(key); it != (this->*cache).end()) {
      auto future = it->second;
      lock.unlock();
      return future.get();  // asked before, maybe still being answered by another task
    }
    (this->*cache).emplace(key, promise.get_future().share());
  }
  Result<bool> answer = compute();
  promise.set_value(answer);
  return answer;
}

Result<bool> StepTriggerContext::path_exists(const std::string& fs_uri, const std::string& path) {
  const auto key = std::make_pair(fs_uri, path);
  return once(&StepTriggerContext::exists_, key, [&]() -> Result<bool> {
    {
      MutexLock lock(mutex_);
      if (auto it = down_.find(fs_uri); it != down_.end()) return tl::unexpected(it->second);
    }
    ++checks_;
    auto fs = file_systems_.resolve(fs_uri);
    Result<bool> answer = fs ? listings_.exists(fs_uri, **fs, path) : tl::unexpected(fs.error());
    if (!answer) {
      MutexLock lock(mutex_);
      down_.emplace(fs_uri, answer.error());
    }
    return answer;
  });
}

std::vector<std::function<void()>> StepTriggerContext::listing_tasks() {
  std::vector<std::function<void()>> tasks;
  for (const auto& [uri, dir] : listings_.planned()) {
    tasks.push_back([this, uri = uri, dir = dir] { prefetch_listing(uri, dir); });
  }
  return tasks;
}

void StepTriggerContext::prefetch_listing(const std::string& fs_uri, const std::string& dir) {
  {
    MutexLock lock(mutex_);
    if (down_.count(fs_uri) > 0) return;
  }
  auto fs = file_systems_.resolve(fs_uri);
  if (!fs) return;  // the asks report it
  auto listed = listings_.prefetch(fs_uri, **fs, dir);
  if (!listed && listed.error().code == ErrorCode::kUnavailable) {
    MutexLock lock(mutex_);
    down_.emplace(fs_uri, listed.error());
  }
}

bool StepTriggerContext::remote(const std::string& fs_uri) {
  {
    MutexLock lock(mutex_);
    if (auto it = remote_.find(fs_uri); it != remote_.end()) return it->second;
  }
  auto fs = file_systems_.resolve(fs_uri);
  const bool remote = fs && (*fs)->prefers_listing();
  MutexLock lock(mutex_);
  remote_.emplace(fs_uri, remote);
  return remote;
}

Result<bool> StepTriggerContext::slot_succeeded(const std::string& workflow_id, Time time) {
  const auto key = std::make_pair(workflow_id, time);
  return once(&StepTriggerContext::succeeded_, key, [&]() -> Result<bool> {
    auto state = db_.get_slot(SlotId{workflow_id, time});
    if (!state) return tl::unexpected(state.error());
    return state->has_value() && (*state)->status == SlotStatus::kSuccess;
  });
}

Result<SlotStatus> StepTriggerContext::slot_status(const std::string& w, Time t) {
  MutexLock lock(datasets_mutex_);
  return datasets_.slot_status(w, t);
}

Result<std::vector<SlotState>> StepTriggerContext::stored_slots(const std::string& w, Time s,
                                                                Time e) {
  MutexLock lock(datasets_mutex_);
  return datasets_.stored_slots(w, s, e);
}

Result<bool> StepTriggerContext::instance_announced(const std::string& d, Time t) {
  MutexLock lock(datasets_mutex_);
  return datasets_.instance_announced(d, t);
}

Result<std::vector<Time>> StepTriggerContext::announced_instances(const std::string& d, Time s,
                                                                  Time e) {
  MutexLock lock(datasets_mutex_);
  return datasets_.announced_instances(d, s, e);
}

Result<void> SideEffectFence::confirm() {
  if (!lost_.load()) {
    auto confirmed = guard_.confirm();
    if (confirmed) return {};
    MutexLock lock(mutex_);
    if (!lost_.load()) {
      why_ = confirmed.error().message;
      lost_.store(true);
      spdlog::error(
          "lease lost: {}; the step stops here, without further side effects, and "
          "leaves the state as it is for the new leader",
          why_);
    }
  }
  return fail("lease lost: " + why(), ErrorCode::kUnavailable);
}

std::string SideEffectFence::why() const {
  MutexLock lock(mutex_);
  return why_;
}

std::optional<std::string> CallGate::down_error(const std::string& endpoint) {
  if (endpoint.empty()) return std::nullopt;
  MutexLock lock(mutex_);
  auto it = down_.find(endpoint);
  if (it == down_.end()) return std::nullopt;
  return it->second;
}

std::string CallGate::fmt_skipped(const std::string& endpoint, const std::string& why) {
  return fmt::format("not asked: {} failed earlier in this step: {}", endpoint, why);
}

void CallGate::record(const std::string& endpoint, const std::string& what,
                      std::chrono::steady_clock::duration took, const Error* error) {
  ++calls_;
  if (error) ++failures_;
  MutexLock lock(mutex_);
  if (took > slowest_) {
    slowest_ = took;
    slowest_what_ = what;
  }
  if (error && error->code == ErrorCode::kUnavailable && !endpoint.empty()) {
    down_.emplace(endpoint, error->message);
  }
}

std::string CallGate::slowest() const {
  MutexLock lock(mutex_);
  if (slowest_what_.empty()) return "";
  return fmt::format("{} ms ({})",
                     std::chrono::duration_cast<std::chrono::milliseconds>(slowest_).count(),
                     slowest_what_);
}

}  // namespace celos::detail
