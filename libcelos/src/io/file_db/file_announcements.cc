#include "io/file_db/file_announcements.h"

#include <algorithm>
#include <set>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "io/file_db/racy_read.h"

namespace celos {

Result<std::vector<FileStatus>> day_directories_between(FileSystem& fs, const std::string& dir,
                                                        Time start, Time end) {
  std::vector<FileStatus> out;
  if (end <= start) return out;
  auto days = fs.list(dir);
  if (!days) {
    if (days.error().code == ErrorCode::kNotFound) return out;
    return tl::unexpected(days.error());
  }
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

std::string FileAnnouncements::path_of(std::string_view dataset, Time time) const {
  return fmt::format("{}/datasets/{}/{}/{}", root_, dataset, format_day(time),
                     format_time_of_day(time));
}

Result<void> FileAnnouncements::announce(const std::vector<StateDatabase::Announcement>& all,
                                         Time now) {
  boost::json::object o;
  o["announced"] = format_time(now);
  const std::string data = boost::json::serialize(o) + "\n";
  std::vector<FileWrite> writes;
  std::set<std::string> paths;
  for (const StateDatabase::Announcement& a : all) {
    std::string path = path_of(a.dataset, a.time);
    if (paths.count(path)) continue;
    auto there = fs_->exists(path);
    if (!there) return tl::unexpected(there.error());
    if (*there) continue;  // idempotent: keep the first announcement's stamp
    paths.insert(path);
    writes.push_back({std::move(path), data});
  }
  if (writes.empty()) return {};
  return fs_->write_files(writes);
}

Result<std::vector<Time>> FileAnnouncements::announced(std::string_view dataset, Time start,
                                                       Time end) {
  std::vector<Time> out;
  const std::string id(dataset);
  const std::string dir = fmt::format("{}/datasets/{}", root_, dataset);
  auto days = day_directories_between(*fs_, dir, start, end);
  if (!days) return tl::unexpected(days.error());
  for (const FileStatus& status : *days) {
    auto times = day(id, dir, status);
    if (!times) return tl::unexpected(times.error());
    for (Time t : **times) {
      if (t >= start && t < end) out.push_back(t);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The announced instances of one day directory, from the cache when it is unchanged.
Result<std::shared_ptr<const std::vector<Time>>> FileAnnouncements::day(const std::string& dataset,
                                                                        const std::string& dir,
                                                                        const FileStatus& status) {
  const bool cacheable = status.mtime_ns != 0 && !racy_read(status.mtime_ns);
  {
    MutexLock lock(mutex_);
    auto& days = cache_[dataset];
    auto it = days.find(status.name);
    if (cacheable && it != days.end() && it->second.mtime_ns == status.mtime_ns) {
      return it->second.times;
    }
  }
  auto files = fs_->list_names(dir + "/" + status.name);  // re-read in a storm: no stat each
  if (!files) return tl::unexpected(files.error());
  std::vector<Time> times;
  times.reserve(files->size());
  for (const FileStatus& f : *files) {
    if (f.is_directory || f.name.empty() || f.name[0] == '.') continue;
    if (auto t = parse_time(status.name + "T" + f.name)) times.push_back(*t);
  }
  auto shared = std::make_shared<const std::vector<Time>>(std::move(times));
  if (cacheable) {
    MutexLock lock(mutex_);
    auto& days = cache_[dataset];
    days.insert_or_assign(status.name, Day{status.mtime_ns, shared});
    while (days.size() > kDaysCached) days.erase(days.begin());
  }
  return shared;
}

}  // namespace celos
