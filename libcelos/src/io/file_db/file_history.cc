#include "io/file_db/file_history.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "celos/state_codecs.h"
#include "io/json_lines.h"

namespace celos {
namespace {

constexpr std::string_view kSuffix = ".jsonl";

}  // namespace

std::string FileHistory::path(const SlotId& id) const {
  return fmt::format("{}/history/{}/{}{}", root_, id.workflow, format_day(id.time), kSuffix);
}

Result<void> FileHistory::append(const std::vector<SlotHistoryEntry>& entries) {
  std::map<std::string, std::string> lines;  // by file: sorted, one append each
  for (const SlotHistoryEntry& e : entries) {
    add_json_line(lines[path(e.to.id)], history_entry_to_json(e));  // io/json_lines.h
  }
  std::vector<FileWrite> appends;
  appends.reserve(lines.size());
  for (auto& [file, data] : lines) appends.push_back({file, std::move(data)});
  MutexLock lock(mutex_);
  return fs_->append_files(appends);
}

Result<std::vector<SlotHistoryEntry>> FileHistory::entries(const std::string& workflow,
                                                           const std::string& file) {
  auto text = fs_->read(file);
  if (!text) return tl::unexpected(text.error());
  std::vector<SlotHistoryEntry> out;
  // A torn line of a crash mid-append is skipped: the rest of the file is fine.
  for_each_json_line(*text, "history file " + file, [&](std::string_view line) -> Result<void> {
    auto entry = history_entry_from_json(workflow, line);
    if (!entry) return tl::unexpected(entry.error());
    out.push_back(std::move(*entry));
    return {};
  });
  return out;
}

Result<std::vector<SlotHistoryEntry>> FileHistory::read(const SlotId& id) {
  auto all = entries(id.workflow, path(id));
  if (!all) {
    if (all.error().code == ErrorCode::kNotFound) return std::vector<SlotHistoryEntry>{};
    return tl::unexpected(all.error());
  }
  std::vector<SlotHistoryEntry> out;
  for (SlotHistoryEntry& e : *all) {
    if (e.to.id.time == id.time) out.push_back(std::move(e));
  }
  return out;
}

Result<std::size_t> FileHistory::prune(Time before) {
  std::size_t pruned = 0;
  auto workflows = fs_->list(root_ + "/history");
  if (!workflows) {
    if (workflows.error().code == ErrorCode::kNotFound) return pruned;
    return tl::unexpected(workflows.error());
  }
  const std::string day = format_day(before);
  for (const FileStatus& wf : *workflows) {
    if (!wf.is_directory || wf.name.empty() || wf.name[0] == '.') continue;
    if (auto done = prune_workflow(wf.name, day, before, pruned); !done) {
      return tl::unexpected(done.error());
    }
  }
  return pruned;
}

Result<void> FileHistory::prune_workflow(const std::string& workflow, const std::string& day,
                                         Time before, std::size_t& pruned) {
  const std::string dir = fmt::format("{}/history/{}", root_, workflow);
  auto files = fs_->list(dir);
  if (!files) return tl::unexpected(files.error());
  for (const FileStatus& f : *files) {
    if (f.is_directory || f.name.size() <= kSuffix.size() || f.name[0] == '.') continue;
    const std::string file_day = f.name.substr(0, f.name.size() - kSuffix.size());
    if (file_day.size() != day.size() || f.name.substr(file_day.size()) != kSuffix ||
        file_day >= day) {
      continue;
    }
    MutexLock lock(mutex_);
    auto all = entries(workflow, dir + "/" + f.name);
    if (!all) return tl::unexpected(all.error());
    const bool old = std::all_of(all->begin(), all->end(),
                                 [&](const SlotHistoryEntry& e) { return e.at < before; });
    if (!old) continue;  // a recent change (a rerun of an old slot): the day stays
    if (auto removed = fs_->remove(dir + "/" + f.name); !removed) {
      return tl::unexpected(removed.error());
    }
    pruned += all->size();
  }
  return {};
}

}  // namespace celos
