// The file state database of SPEC §5 on any FileSystem.
//
// Reading every slot file of every workflow on every step would cost a thousand workflows
// 168,000 file reads per step, so the slots of each day directory are cached and re-read only
// when the directory's mtime changes (every write renames into it). A read of a directory that
// had been modified less than a second before is not trusted, so that an edit made within the
// file system's timestamp granularity of our read is still seen (git's "racy" rule).
#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/file_system.h"
#include "celos/mutex.h"
#include "celos/state_codecs.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"
#include "io/file_db/file_announcements.h"
#include "io/file_db/file_history.h"
#include "io/file_db/packed_day.h"
#include "io/file_db/racy_read.h"
#include "io/file_db/rerun_markers.h"

namespace celos {
namespace json = boost::json;

namespace {

// The mtime of a cached day whose directory did not exist: never equal to a real one.
constexpr std::int64_t kAbsentDay = -1;

class FileStateDatabase final : public StateDatabase {
 public:
  // `hold` lives as long as the database (the directory lock of open_file_state_database);
  // `probe`, when given, is check() (the lock's probe of the directory).
  FileStateDatabase(std::shared_ptr<FileSystem> fs, std::string root,
                    std::shared_ptr<void> hold = nullptr,
                    std::function<Result<void>()> probe = nullptr)
      : fs_(std::move(fs)),
        root_(std::move(root)),
        hold_(std::move(hold)),
        probe_(std::move(probe)) {
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
    markers_ = std::make_unique<RerunMarkers>(fs_, root_);
    history_ = std::make_unique<FileHistory>(fs_, root_);
    announcements_ = std::make_unique<FileAnnouncements>(fs_, root_);
  }

  Result<void> check() override { return probe_ ? probe_() : Result<void>{}; }

  Result<std::optional<SlotState>> get_slot(const SlotId& id) override {
    const std::string path = slot_path("state", id);
    auto text = fs_->read(path);
    if (!text) {
      if (text.error().code == ErrorCode::kNotFound) return std::optional<SlotState>{};
      return tl::unexpected(text.error());
    }
    auto state = parse_file(path, id, *text);
    if (!state) return tl::unexpected(state.error());
    return std::optional<SlotState>(std::move(*state));
  }

  Result<std::vector<SlotState>> get_slots(std::string_view workflow, Time start,
                                           Time end) override {
    std::vector<SlotState> out;
    auto read = for_each_day(
        workflow, start, end,
        [&](const std::string& id, const PackedDay& day) { day.unpack(id, start, end, out); });
    if (!read) return tl::unexpected(read.error());
    return out;
  }

  Result<Window> get_window(std::string_view workflow, Time start, Time end) override {
    Window window;
    auto read =
        for_each_day(workflow, start, end, [&](const std::string& id, const PackedDay& day) {
          day.unpack_window(id, start, end, window.open, window.closed);
        });
    if (!read) return tl::unexpected(read.error());
    tend_window_cache(std::string(workflow), start, end, *read);
    return window;
  }

  Result<void> put_slots(const std::vector<SlotState>& states) override {
    return put_slots_after(states, [] { return Result<void>{}; });
  }

  Result<void> put_slots_after(const std::vector<SlotState>& states,
                               const std::function<Result<void>()>& before_visible) override {
    if (states.empty()) return before_visible();
    std::vector<FileWrite> writes;
    writes.reserve(states.size());
    for (const SlotState& s : states) {
      writes.push_back({slot_path("state", s.id), slot_state_to_json(s) + "\n"});
    }
    auto written = fs_->write_files_after(writes, before_visible);
    if (written) {
      refresh_cached_days(states);
      return written;
    }
    // Some files may be written, others not: forget the cached days of these slots, the next
    // read goes to the files (which are whole, old or new, thanks to write_files).
    MutexLock lock(mutex_);
    for (const SlotState& s : states) {
      auto wf = cache_.find(s.id.workflow);
      if (wf != cache_.end()) wf->second.erase(format_day(s.id.time));
    }
    return written;
  }

  Result<void> mark_rerun(const SlotId& id, Time now) override { return mark_reruns({id}, now); }

  Result<std::vector<Time>> rerun_times(std::string_view workflow, Time now) override {
    std::vector<Time> out;
    auto days = markers_->read(workflow);
    if (!days) return tl::unexpected(days.error());
    for (const RerunMarkers::Day& day : *days) {
      const std::string day_dir = markers_->day_dir(workflow, day.name);
      bool all_expired = true;
      for (const RerunMarkers::Marker& m : day.markers) {
        auto expired = marker_expired(SlotId{std::string(workflow), m.slot}, m.marked, now);
        if (!expired) return tl::unexpected(expired.error());
        if (*expired) {
          const std::string path = day_dir + "/" + m.file;
          if (auto removed = fs_->remove(path); !removed) return tl::unexpected(removed.error());
          markers_->forget(std::string(workflow), day.name);
          spdlog::info("rerun marker expired and removed: {}", path);
          continue;
        }
        all_expired = false;
        out.push_back(m.slot);
      }
      if (all_expired) {  // tidy: an empty day directory
        (void)fs_->remove(day_dir);
        markers_->forget(std::string(workflow), day.name);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  Result<bool> is_paused(std::string_view workflow) override {
    return fs_->exists(fmt::format("{}/paused/{}", root_, workflow));
  }

  Result<void> set_paused(std::string_view workflow, bool paused) override {
    const std::string path = fmt::format("{}/paused/{}", root_, workflow);
    if (paused) return fs_->write(path, "");
    return fs_->remove(path);
  }

  Result<Maintenance> maintenance() override {
    const std::string path = root_ + "/maintenance";
    auto text = fs_->read(path);
    if (!text) {
      if (text.error().code == ErrorCode::kNotFound) return Maintenance{};
      return tl::unexpected(text.error());
    }
    auto parsed = maintenance_from_json(*text);
    if (!parsed) return fail(path + ": " + parsed.error().message, ErrorCode::kCorrupt);
    return parsed;
  }

  Result<void> set_maintenance(const Maintenance& maintenance) override {
    return fs_->write(root_ + "/maintenance", maintenance_to_json(maintenance));
  }

  // Backfill plans: <db>/backfills/<id>, one JSON record each.
  Result<std::vector<std::string>> backfill_records() override {
    std::vector<std::string> out;
    auto files = fs_->list(root_ + "/backfills");
    if (!files && files.error().code == ErrorCode::kNotFound) return out;
    if (!files) return tl::unexpected(files.error());
    for (const FileStatus& f : *files) {
      if (f.is_directory || f.name.find('.') != std::string::npos) continue;  // temp files
      auto text = fs_->read(root_ + "/backfills/" + f.name);
      if (!text) return tl::unexpected(text.error());
      out.push_back(std::move(*text));
    }
    return out;
  }
  Result<void> put_backfill_record(const std::string& id, const std::string& record) override {
    return fs_->write(root_ + "/backfills/" + id, record);
  }

  // History: io/file_db/file_history.h.
  Result<void> append_history(const std::vector<SlotHistoryEntry>& entries) override {
    return history_->append(entries);
  }
  Result<std::vector<SlotHistoryEntry>> slot_history(const SlotId& id) override {
    return history_->read(id);
  }
  Result<std::size_t> prune_history(Time before) override { return history_->prune(before); }

  Result<void> mark_reruns(const std::vector<SlotId>& ids, Time now) override {
    json::object o;
    o["rerunTime"] = format_time(now);
    const std::string data = json::serialize(o) + "\n";
    std::vector<FileWrite> writes;
    writes.reserve(ids.size());
    for (const SlotId& id : ids) writes.push_back({slot_path("rerun", id), data});
    auto written = fs_->write_files(writes);
    if (written) markers_->wrote(ids, now);
    return written;
  }

  Result<void> announce_instance(std::string_view dataset, Time time, Time now) override {
    return announcements_->announce({{std::string(dataset), time}}, now);
  }
  Result<void> announce_instances(const std::vector<Announcement>& all, Time now) override {
    return announcements_->announce(all, now);
  }
  Result<std::vector<Time>> announced_instances(std::string_view dataset, Time start,
                                                Time end) override {
    return announcements_->announced(dataset, start, end);
  }

 private:
  struct CachedDay {
    std::int64_t mtime_ns = 0;
    bool racy = true;  // read too soon after a modification: do not reuse
    std::shared_ptr<const PackedDay> slots;
  };

  std::string slot_path(std::string_view area, const SlotId& id) const {
    return fmt::format("{}/{}/{}/{}/{}", root_, area, id.workflow, format_day(id.time),
                       format_time_of_day(id.time));
  }

  Result<SlotState> parse_file(const std::string& path, const SlotId& id, std::string_view text) {
    auto state = slot_state_from_json(id, text);
    if (!state) {
      return fail(fmt::format("corrupt state file {}: {}", path, state.error().message),
                  ErrorCode::kCorrupt);
    }
    return state;
  }

  // After a successful write, a cached day takes the written states and the directory's new
  // mtime, so that the next step does not read the whole day again (10,000 workflows that each
  // started a job would re-read 240,000 files). Our own rename is trusted although it is
  // "racy": a hand edit of the same directory within the same timestamp tick could be missed
  // until the directory changes again. A day that cannot be stat'ed, or whose cached read was
  // racy itself, is forgotten.
  void refresh_cached_days(const std::vector<SlotState>& states) {
    std::map<std::pair<std::string, std::string>, std::vector<const SlotState*>> by_day;
    for (const SlotState& s : states) by_day[{s.id.workflow, format_day(s.id.time)}].push_back(&s);
    for (const auto& entry : by_day) {
      const std::string& workflow = entry.first.first;
      const std::string& day = entry.first.second;
      const std::string dir = fmt::format("{}/state/{}/{}", root_, workflow, day);
      auto status = fs_->file_status(dir);
      // A directory that was absent holds our writes only, unless someone else wrote into it
      // since: its listing tells (taken after the stat, so a later write changes the mtime).
      const bool was_absent = cached_mtime(workflow, day) == kAbsentDay;
      const bool only_ours = !was_absent || holds_only(dir, entry.second);
      MutexLock lock(mutex_);
      auto wf = cache_.find(workflow);
      if (wf == cache_.end()) continue;
      auto cached = wf->second.find(day);
      if (cached == wf->second.end()) continue;
      if (!status || status->mtime_ns == 0 || cached->second.racy || !only_ours) {
        wf->second.erase(cached);  // a racy read may be stale: read the day again
        continue;
      }
      std::vector<SlotState> merged;
      cached->second.slots->unpack(workflow, Time::min(), Time::max(), merged);
      std::map<Time, SlotState> by_time;
      for (SlotState& m : merged) by_time.insert_or_assign(m.id.time, std::move(m));
      for (const SlotState* w : entry.second) by_time.insert_or_assign(w->id.time, *w);
      merged.clear();
      for (auto& kv : by_time) merged.push_back(std::move(kv.second));
      cached->second =
          CachedDay{status->mtime_ns, false, std::make_shared<const PackedDay>(std::move(merged))};
    }
  }

  std::optional<std::int64_t> cached_mtime(const std::string& workflow, const std::string& day) {
    MutexLock lock(mutex_);
    auto wf = cache_.find(workflow);
    if (wf == cache_.end()) return std::nullopt;
    auto cached = wf->second.find(day);
    if (cached == wf->second.end()) return std::nullopt;
    return cached->second.mtime_ns;
  }

  // Whether the slot files of day directory `dir` are exactly those of `written`.
  bool holds_only(const std::string& dir, const std::vector<const SlotState*>& written) {
    auto files = fs_->list(dir);
    if (!files) return false;
    std::vector<std::string> names, ours;
    for (const FileStatus& f : *files) {
      if (!f.is_directory && !f.name.empty() && f.name[0] != '.') names.push_back(f.name);
    }
    for (const SlotState* w : written) ours.push_back(format_time_of_day(w->id.time));
    std::sort(names.begin(), names.end());
    std::sort(ours.begin(), ours.end());
    ours.erase(std::unique(ours.begin(), ours.end()), ours.end());
    return names == ours;
  }

  // Calls `f(workflow, day)` for each (cached or read) day directory that may hold times in
  // [start, end), oldest first. Returns the names of those directories.
  template <class F>
  Result<std::vector<std::string>> for_each_day(std::string_view workflow, Time start, Time end,
                                                F&& f) {
    auto days =
        day_directories_between(*fs_, fmt::format("{}/state/{}", root_, workflow), start, end);
    if (!days) return tl::unexpected(days.error());
    const std::string id(workflow);
    std::vector<std::string> names;
    for (const FileStatus& day : *days) {
      auto slots = day_slots(id, day);
      if (!slots) return tl::unexpected(slots.error());
      f(id, **slots);
      names.push_back(day.name);
    }
    return names;
  }

  // The step reads the same window of a workflow on every step. The days of the window that
  // have no directory yet are remembered as empty (kAbsentDay), so that the step's own writes
  // into them are merged into the cache instead of read back file by file on the next step
  // (the first step writes 1.68 million files at 10,000 workflows). Cached days older than
  // the window are dropped: the cache follows the window instead of growing by a day a day.
  void tend_window_cache(const std::string& workflow, Time start, Time end,
                         std::vector<std::string> present) {
    if (end <= start) return;
    std::sort(present.begin(), present.end());
    static const auto empty = std::make_shared<const PackedDay>();
    const std::string first = format_day(start), last = format_day(end);
    MutexLock lock(mutex_);
    auto& days = cache_[workflow];
    days.erase(days.begin(), days.lower_bound(first));
    for (Time t = std::chrono::floor<std::chrono::days>(start);; t += std::chrono::days{1}) {
      std::string day = format_day(t);
      if (day > last) break;
      if (std::binary_search(present.begin(), present.end(), day)) continue;
      days.insert_or_assign(std::move(day), CachedDay{kAbsentDay, false, empty});
    }
  }

  // The slots stored in one day directory, from the cache when the directory is unchanged.
  Result<std::shared_ptr<const PackedDay>> day_slots(const std::string& workflow,
                                                     const FileStatus& day) {
    // File systems that cannot tell a modification time are never cached.
    const bool cacheable = day.mtime_ns != 0;
    const bool racy = racy_read(day.mtime_ns);
    {
      MutexLock lock(mutex_);
      auto& days = cache_[workflow];
      auto it = days.find(day.name);
      if (it != days.end() && !it->second.racy && it->second.mtime_ns == day.mtime_ns) {
        return it->second.slots;
      }
    }
    const std::string dir = fmt::format("{}/state/{}/{}", root_, workflow, day.name);
    auto files = fs_->list(dir);
    if (!files) return tl::unexpected(files.error());
    std::vector<SlotState> states;
    for (const FileStatus& f : *files) {
      if (f.is_directory || f.name.empty() || f.name[0] == '.') continue;  // temp files
      const std::string path = dir + "/" + f.name;
      auto t = parse_time(day.name + "T" + f.name);
      if (!t) {
        spdlog::warn("ignoring state file with a bad name: {}", path);
        continue;
      }
      auto text = fs_->read(path);
      if (!text) {
        if (text.error().code == ErrorCode::kNotFound) continue;  // removed meanwhile
        return tl::unexpected(text.error());
      }
      auto state = parse_file(path, SlotId{workflow, *t}, *text);
      if (!state) return tl::unexpected(state.error());
      states.push_back(std::move(*state));
    }
    auto slots = std::make_shared<const PackedDay>(std::move(states));
    if (cacheable) {
      MutexLock lock(mutex_);
      cache_[workflow][day.name] = CachedDay{day.mtime_ns, racy, slots};
    }
    return slots;
  }

  // A marker older than kRerunMarkerLifetime expires once its slot is final (SPEC §16): a rerun
  // that has not finished yet keeps the slot in the step's view however long it takes.
  Result<bool> marker_expired(const SlotId& id, Time marked, Time now) {
    if (now - marked <= kRerunMarkerLifetime) return false;
    auto slot = get_slot(id);
    if (!slot) return tl::unexpected(slot.error());
    return slot->has_value() && is_final((*slot)->status);
  }

  std::shared_ptr<FileSystem> fs_;
  std::string root_;
  std::shared_ptr<void> hold_;
  std::function<Result<void>()> probe_;
  std::unique_ptr<RerunMarkers> markers_;
  std::unique_ptr<FileHistory> history_;
  std::unique_ptr<FileAnnouncements> announcements_;
  Mutex mutex_;
  std::map<std::string, std::map<std::string, CachedDay>> cache_ GUARDED_BY(mutex_);
};

}  // namespace

std::unique_ptr<StateDatabase> make_file_state_database(std::shared_ptr<FileSystem> fs,
                                                        std::string root) {
  return std::make_unique<FileStateDatabase>(std::move(fs), std::move(root));
}

std::unique_ptr<StateDatabase> make_file_state_database_holding(
    std::shared_ptr<FileSystem> fs, std::string root, std::shared_ptr<void> hold,
    std::function<Result<void>()> probe) {
  return std::make_unique<FileStateDatabase>(std::move(fs), std::move(root), std::move(hold),
                                             std::move(probe));
}

}  // namespace celos
