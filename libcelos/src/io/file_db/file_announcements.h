// The announced dataset instances of the file state database (SPEC §14):
// <db>/datasets/<dataset>/<yyyy-mm-dd>/<HH:MM:SS.sssZ>, a file {"announced": "<time>"} each.
//
// The API's listings and lineage read a week of a dataset at a time, so a day directory is
// listed (and its 1,440 files of a minutely dataset stat'ed) only when its mtime changed since
// the last read, with the racy rule of io/file_db/racy_read.h. A burst of announcements is
// written as one group of files (FileSystem::write_files: one sync for many files).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "celos/file_system.h"
#include "celos/mutex.h"
#include "celos/state_db.h"

namespace celos {

// The day directories (yyyy-mm-dd) of `dir` that may hold times in [start, end); none when
// `dir` is missing. Shared with the slots' days of the file state database.
[[nodiscard]] Result<std::vector<FileStatus>> day_directories_between(FileSystem& fs,
                                                                      const std::string& dir,
                                                                      Time start, Time end);

class FileAnnouncements {
 public:
  FileAnnouncements(std::shared_ptr<FileSystem> fs, std::string root);

  // StateDatabase::announce_instances: the ones not stored yet, in one write group.
  [[nodiscard]] Result<void> announce(const std::vector<StateDatabase::Announcement>& all,
                                      Time now);
  // StateDatabase::announced_instances.
  [[nodiscard]] Result<std::vector<Time>> announced(std::string_view dataset, Time start, Time end)
      EXCLUDES(mutex_);

 private:
  struct Day {
    std::int64_t mtime_ns = 0;
    std::shared_ptr<const std::vector<Time>> times;
  };
  // How many day directories of one dataset the cache keeps (the newest).
  static constexpr std::size_t kDaysCached = 32;

  std::string path_of(std::string_view dataset, Time time) const;
  Result<std::shared_ptr<const std::vector<Time>>> day(const std::string& dataset,
                                                       const std::string& dir,
                                                       const FileStatus& status) EXCLUDES(mutex_);

  std::shared_ptr<FileSystem> fs_;
  std::string root_;
  Mutex mutex_;
  std::map<std::string, std::map<std::string, Day>> cache_ GUARDED_BY(mutex_);  // dataset, day
};

}  // namespace celos
