#include "io/file_db/rerun_markers.h"

#include <algorithm>
#include <chrono>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "io/file_db/racy_read.h"

namespace celos {
namespace {

namespace json = boost::json;

void merge(std::vector<RerunMarkers::Marker>& into, const RerunMarkers::Marker& m) {
  auto at = std::lower_bound(into.begin(), into.end(), m.slot,
                             [](const RerunMarkers::Marker& x, Time t) { return x.slot < t; });
  if (at != into.end() && at->slot == m.slot) {
    *at = m;
  } else {
    into.insert(at, m);
  }
}

}  // namespace

RerunMarkers::RerunMarkers(std::shared_ptr<FileSystem> fs, std::string root)
    : fs_(std::move(fs)), root_(std::move(root)) {}

std::string RerunMarkers::day_dir(std::string_view workflow, std::string_view day) const {
  return fmt::format("{}/rerun/{}/{}", root_, workflow, day);
}

Result<std::vector<RerunMarkers::Day>> RerunMarkers::read(std::string_view workflow) {
  std::vector<Day> out;
  const std::string wf(workflow);
  auto days = fs_->list(fmt::format("{}/rerun/{}", root_, workflow));
  if (!days) {
    if (days.error().code != ErrorCode::kNotFound) return tl::unexpected(days.error());
    MutexLock lock(mutex_);
    cache_.erase(wf);
    return out;
  }
  for (const FileStatus& day : *days) {
    if (!day.is_directory) continue;
    {
      MutexLock lock(mutex_);
      auto cached = cache_.find(wf);
      if (cached != cache_.end()) {
        auto it = cached->second.find(day.name);
        if (it != cached->second.end() && !it->second.racy && day.mtime_ns != 0 &&
            it->second.mtime_ns == day.mtime_ns) {
          out.push_back(Day{day.name, it->second.markers});
          continue;
        }
      }
    }
    auto markers = read_day(wf, day);
    if (!markers) return tl::unexpected(markers.error());
    if (day.mtime_ns != 0) {
      MutexLock lock(mutex_);
      cache_[wf][day.name] = CachedDay{day.mtime_ns, racy_read(day.mtime_ns), *markers};
    }
    out.push_back(Day{day.name, std::move(*markers)});
  }
  // Days that are gone are dropped from the cache.
  MutexLock lock(mutex_);
  if (auto cached = cache_.find(wf); cached != cache_.end()) {
    std::erase_if(cached->second, [&](const auto& entry) {
      return std::none_of(out.begin(), out.end(),
                          [&](const Day& d) { return d.name == entry.first; });
    });
  }
  return out;
}

Result<std::vector<RerunMarkers::Marker>> RerunMarkers::read_day(const std::string& workflow,
                                                                 const FileStatus& day) {
  const std::string dir = day_dir(workflow, day.name);
  auto files = fs_->list(dir);
  if (!files) {
    if (files.error().code == ErrorCode::kNotFound) return std::vector<Marker>{};
    return tl::unexpected(files.error());
  }
  std::vector<Marker> markers;
  for (const FileStatus& f : *files) {
    if (f.name.empty() || f.name[0] == '.') continue;  // temporary files
    const std::string path = dir + "/" + f.name;
    auto slot_time = parse_time(day.name + "T" + f.name);
    if (!slot_time) {
      spdlog::warn("ignoring rerun marker with a bad name: {}", path);
      continue;
    }
    auto marked = marker_time(path, f);
    if (!marked) {
      if (marked.error().code == ErrorCode::kNotFound) continue;  // removed meanwhile
      return tl::unexpected(marked.error());
    }
    markers.push_back(Marker{*slot_time, *marked, f.name});
  }
  std::sort(markers.begin(), markers.end(),
            [](const Marker& a, const Marker& b) { return a.slot < b.slot; });
  return markers;
}

// When a rerun marker was written: its rerunTime, or the file's mtime for markers without one.
Result<Time> RerunMarkers::marker_time(const std::string& path, const FileStatus& f) {
  auto text = fs_->read(path);
  if (!text) return tl::unexpected(text.error());
  boost::system::error_code ec;
  json::value v = json::parse(*text, ec);
  if (!ec && v.is_object()) {
    if (const json::value* t = v.as_object().if_contains("rerunTime"); t && t->is_string()) {
      auto parsed = parse_time(std::string_view(t->get_string()));
      if (parsed) return *parsed;
    }
  }
  if (f.mtime_ns > 0) {
    return Time{std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::nanoseconds(f.mtime_ns))};
  }
  return fail(fmt::format("corrupt rerun marker {}: no rerunTime", path), ErrorCode::kCorrupt);
}

void RerunMarkers::wrote(const std::vector<SlotId>& ids, Time marked) {
  std::map<std::pair<std::string, std::string>, std::vector<Marker>> by_day;
  for (const SlotId& id : ids) {
    by_day[{id.workflow, format_day(id.time)}].push_back(
        Marker{id.time, marked, format_time_of_day(id.time)});
  }
  for (const auto& [key, markers] : by_day) {
    const auto& [workflow, day] = key;
    {
      MutexLock lock(mutex_);
      auto wf = cache_.find(workflow);
      if (wf == cache_.end() || !wf->second.count(day)) continue;  // read when next asked for
    }
    auto status = fs_->file_status(day_dir(workflow, day));
    MutexLock lock(mutex_);
    auto wf = cache_.find(workflow);
    if (wf == cache_.end()) continue;
    auto cached = wf->second.find(day);
    if (cached == wf->second.end()) continue;
    if (!status || status->mtime_ns == 0 || cached->second.racy) {
      wf->second.erase(cached);
      continue;
    }
    for (const Marker& m : markers) merge(cached->second.markers, m);
    cached->second.mtime_ns = status->mtime_ns;
  }
}

void RerunMarkers::forget(const std::string& workflow, const std::string& day) {
  MutexLock lock(mutex_);
  if (auto wf = cache_.find(workflow); wf != cache_.end()) wf->second.erase(day);
}

}  // namespace celos
