// The rerun markers of the file state database (<db>/rerun/<workflow>/<yyyy-mm-dd>/<time>),
// read through a cache of day directories.
//
// Every step asks every workflow for its markers, and a RUNNING slot near the end of the window
// gets one (step.cc, follow): at 10,000 workflows whose oldest slots run, a step read 10,000 to
// 30,000 marker files only to learn what it had learnt the step before. A day directory is now
// read again only when its mtime changes (every write or removal of a marker renames or
// unlinks in it), with the file state database's rule for a directory modified less than a
// second before a read ("racy": not reused). Our own writes update the cache as the state
// cache does.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "celos/file_system.h"
#include "celos/mutex.h"
#include "celos/slot.h"

namespace celos {

class RerunMarkers {
 public:
  struct Marker {
    Time slot;         // the marked slot's time
    Time marked;       // its rerunTime (the file's mtime for a marker without one)
    std::string file;  // its file's name in the day directory
  };
  struct Day {
    std::string name;  // yyyy-mm-dd, the directory's name
    std::vector<Marker> markers;
  };

  RerunMarkers(std::shared_ptr<FileSystem> fs, std::string root);

  // The markers of `workflow`, by day directory in name order (a day directory without
  // markers is listed too, so that it can be tidied). Reads only the day directories that
  // changed since they were cached.
  Result<std::vector<Day>> read(std::string_view workflow);

  // Our own write of markers `ids`, all with rerunTime `marked`, succeeded: the cached days
  // that hold them take them (a day not cached yet is read when next asked for).
  void wrote(const std::vector<SlotId>& ids, Time marked);

  // A day directory changed in a way the cache does not follow (a marker removed).
  void forget(const std::string& workflow, const std::string& day);

  std::string day_dir(std::string_view workflow, std::string_view day) const;

 private:
  struct CachedDay {
    std::int64_t mtime_ns = 0;
    bool racy = true;
    std::vector<Marker> markers;  // by slot time
  };

  Result<std::vector<Marker>> read_day(const std::string& workflow, const FileStatus& day);
  Result<Time> marker_time(const std::string& path, const FileStatus& f);

  std::shared_ptr<FileSystem> fs_;
  std::string root_;
  Mutex mutex_;
  std::map<std::string, std::map<std::string, CachedDay>, std::less<>> cache_ GUARDED_BY(mutex_);
};

}  // namespace celos
