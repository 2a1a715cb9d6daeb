#include "io/file_db/file_announcements.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "celos/state_codecs.h"
#include "io/file_db/racy_read.h"
#include "io/json_lines.h"

namespace celos {
namespace {

constexpr std::string_view kPackedSuffix = ".jsonl";

// The entries of `dir`; none when it is missing.
Result<std::vector<FileStatus>> list_or_none(FileSystem& fs, const std::string& dir) {
  auto entries = fs.list(dir);
  if (!entries && entries.error().code == ErrorCode::kNotFound) return std::vector<FileStatus>{};
  return entries;
}

// Whether a read of an entry listed with `status` may be kept: absent, or its file system tells
// mtimes and it did not change within the last second.
bool keepable(const std::optional<FileStatus>& status) {
  return !status || (status->mtime_ns != 0 && !racy_read(status->mtime_ns));
}

// The instances of day directory `day` (earlier versions): a file named by its time of day.
void add_instance_files(const std::string& day, const std::vector<FileStatus>& files,
                        std::vector<Time>& out) {
  for (const FileStatus& f : files) {
    if (f.is_directory || f.name.empty() || f.name[0] == '.') continue;
    if (auto t = parse_time(day + "T" + f.name)) out.push_back(*t);
  }
}

// The instances of a day's .jsonl file: torn and empty lines skipped.
void add_packed_lines(const std::string& path, std::string_view text, std::vector<Time>& out) {
  for_each_json_line(text, "announcement file " + path, [&](std::string_view line) -> Result<void> {
    auto announced = announcement_line_from_json(line);
    if (!announced) return tl::unexpected(announced.error());
    out.push_back(announced->time);
    return {};
  });
}

}  // namespace

Result<std::vector<FileStatus>> day_directories_between(FileSystem& fs, const std::string& dir,
                                                        Time start, Time end) {
  std::vector<FileStatus> out;
  if (end <= start) return out;
  auto days = list_or_none(fs, dir);
  if (!days) return tl::unexpected(days.error());
  const std::string first_day = format_day(start), last_day = format_day(end);
  for (FileStatus& day : *days) {
    if (day.is_directory && day.name >= first_day && day.name <= last_day) {
      out.push_back(std::move(day));
    }
  }
  return out;
}

FileAnnouncements::FileAnnouncements(std::shared_ptr<FileSystem> fs, std::string root)
    : fs_(std::move(fs)), root_(std::move(root)) {}

FileAnnouncements::Stamp FileAnnouncements::Day::stamp() const {
  Stamp s;
  if (directory) s.directory_mtime_ns = directory->mtime_ns;
  if (packed) {
    s.file_mtime_ns = packed->mtime_ns;
    s.file_size = packed->size;
  }
  return s;
}

std::string FileAnnouncements::dataset_dir(std::string_view dataset) const {
  return fmt::format("{}/datasets/{}", root_, dataset);
}

std::string FileAnnouncements::packed_path(std::string_view dataset, std::string_view day) const {
  return fmt::format("{}/datasets/{}/{}{}", root_, dataset, day, kPackedSuffix);
}

Result<std::map<std::string, FileAnnouncements::Day>> FileAnnouncements::days_between(
    const std::string& dataset, Time start, Time end) {
  std::map<std::string, Day> days;
  if (end <= start) return days;
  auto entries = list_or_none(*fs_, dataset_dir(dataset));
  if (!entries) return tl::unexpected(entries.error());
  const std::string first_day = format_day(start), last_day = format_day(end);
  for (FileStatus& e : *entries) {
    std::string name = e.name;
    if (!e.is_directory) {
      if (!name.ends_with(kPackedSuffix)) continue;
      name.resize(name.size() - kPackedSuffix.size());
    }
    if (name < first_day || name > last_day) continue;
    Day& day = days[name];
    day.name = std::move(name);
    (e.is_directory ? day.directory : day.packed) = std::move(e);
  }
  return days;
}

Result<std::vector<Time>> FileAnnouncements::announced(std::string_view dataset, Time start,
                                                       Time end) {
  std::vector<Time> out;
  const std::string id(dataset);
  auto days = days_between(id, start, end);
  if (!days) return tl::unexpected(days.error());
  for (const auto& [name, day] : *days) {
    auto times = times_of(id, day);
    if (!times) return tl::unexpected(times.error());
    for (Time t : **times) {
      if (t >= start && t < end) out.push_back(t);
    }
  }
  // A hand-written line may hold a time of another day: the days are not disjoint then.
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<FileAnnouncements::Times> FileAnnouncements::times_of(const std::string& dataset,
                                                             const Day& day) {
  const Stamp stamp = day.stamp();
  {
    MutexLock lock(mutex_);
    auto& days = cache_[dataset];
    auto it = days.find(day.name);
    if (it != days.end() && it->second.stamp == stamp) return it->second.times;
  }
  auto times = read_day(dataset, day);
  if (times && keepable(day.directory) && keepable(day.packed)) {
    MutexLock lock(mutex_);
    keep(dataset, day.name, Cached{stamp, *times});
  }
  return times;
}

// The union of the day's directory and file; an entry removed since it was listed is empty.
Result<FileAnnouncements::Times> FileAnnouncements::read_day(const std::string& dataset,
                                                             const Day& day) {
  std::vector<Time> times;
  if (day.directory) {
    // list_names: re-read in a storm, without a stat of each file.
    auto files = fs_->list_names(dataset_dir(dataset) + "/" + day.name);
    if (!files && files.error().code != ErrorCode::kNotFound) return tl::unexpected(files.error());
    if (files) add_instance_files(day.name, *files, times);
  }
  if (day.packed) {
    const std::string path = packed_path(dataset, day.name);
    auto text = fs_->read(path);
    if (!text && text.error().code != ErrorCode::kNotFound) return tl::unexpected(text.error());
    if (text) add_packed_lines(path, *text, times);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  return std::make_shared<const std::vector<Time>>(std::move(times));
}

Result<void> FileAnnouncements::announce(const std::vector<StateDatabase::Announcement>& all,
                                         Time now) {
  MutexLock write_lock(write_mutex_);
  auto appends = plan(all, now);
  if (!appends) return tl::unexpected(appends.error());
  if (appends->empty()) return {};
  std::vector<FileWrite> writes;
  writes.reserve(appends->size());
  for (const Append& a : *appends) writes.push_back({packed_path(a.dataset, a.day.name), a.data});
  auto written = fs_->append_files(writes);
  remember(*appends, written.has_value());
  return written;
}

Result<std::vector<FileAnnouncements::Append>> FileAnnouncements::plan(
    const std::vector<StateDatabase::Announcement>& all, Time now) {
  // By dataset and day, each time once, ascending.
  std::map<std::string, std::map<std::string, std::vector<Time>>> wanted;
  for (const StateDatabase::Announcement& a : all) {
    wanted[a.dataset][format_day(a.time)].push_back(a.time);
  }
  std::vector<Append> out;
  for (auto& [dataset, days] : wanted) {
    Time first = Time::max(), last = Time::min();
    for (auto& [name, times] : days) {
      std::sort(times.begin(), times.end());
      times.erase(std::unique(times.begin(), times.end()), times.end());
      first = std::min(first, times.front());
      last = std::max(last, times.back());
    }
    auto listed = days_between(dataset, first, last + std::chrono::milliseconds(1));
    if (!listed) return tl::unexpected(listed.error());
    for (const auto& [name, times] : days) {
      auto it = listed->find(name);
      Day day = it == listed->end() ? Day{name, std::nullopt, std::nullopt} : it->second;
      if (auto planned = plan_day(dataset, std::move(day), times, now, out); !planned) {
        return tl::unexpected(planned.error());
      }
    }
  }
  return out;
}

// The append of `times` (ascending, each once) to one day, less those the day holds already.
Result<void> FileAnnouncements::plan_day(const std::string& dataset, Day day,
                                         const std::vector<Time>& times, Time now,
                                         std::vector<Append>& out) {
  auto known = times_of(dataset, day);
  if (!known) return tl::unexpected(known.error());
  Append a{dataset, std::move(day), *known, {}, {}};
  std::set_difference(times.begin(), times.end(), (*known)->begin(), (*known)->end(),
                      std::back_inserter(a.added));
  if (a.added.empty()) return {};
  for (Time t : a.added) add_json_line(a.data, announcement_line_to_json({t, now}));
  out.push_back(std::move(a));
  return {};
}

void FileAnnouncements::remember(const std::vector<Append>& appends, bool written) {
  for (const Append& a : appends) {
    std::optional<Cached> cached = written ? appended(a) : std::nullopt;
    MutexLock lock(mutex_);
    if (cached) {
      keep(a.dataset, a.day.name, std::move(*cached));
    } else if (auto ds = cache_.find(a.dataset); ds != cache_.end()) {
      ds->second.erase(a.day.name);
    }
  }
}

// The day after its append, when the file grew by exactly the append: what the day held and
// the times added. Nothing when someone else wrote to it meanwhile, when the day's directory
// of earlier versions was read too soon after a change, or when the file system tells no mtime.
std::optional<FileAnnouncements::Cached> FileAnnouncements::appended(const Append& a) {
  if (!keepable(a.day.directory)) return std::nullopt;
  auto status = fs_->file_status(packed_path(a.dataset, a.day.name));
  const std::uint64_t before = a.day.packed ? a.day.packed->size : 0;
  if (!status || status->mtime_ns == 0 || status->size != before + a.data.size()) {
    return std::nullopt;
  }
  Stamp stamp = a.day.stamp();
  stamp.file_mtime_ns = status->mtime_ns;
  stamp.file_size = status->size;
  std::vector<Time> times;
  times.reserve(a.known->size() + a.added.size());
  std::merge(a.known->begin(), a.known->end(), a.added.begin(), a.added.end(),
             std::back_inserter(times));
  return Cached{stamp, std::make_shared<const std::vector<Time>>(std::move(times))};
}

void FileAnnouncements::keep(const std::string& dataset, const std::string& day, Cached cached) {
  auto& days = cache_[dataset];
  days.insert_or_assign(day, std::move(cached));
  while (days.size() > kDaysCached) days.erase(days.begin());
}

}  // namespace celos
