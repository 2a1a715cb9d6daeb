// The announced dataset instances of the file state database (SPEC §14).
//
// Layout. One append-only JSON-lines file per dataset and (UTC) day of the instance,
//   <db>/datasets/<dataset>/<yyyy-mm-dd>.jsonl    {"time":"<instance>","announced":"<when>"}
// one line per instance (celos/state_codecs.h). Earlier versions wrote one file per instance,
//   <db>/datasets/<dataset>/<yyyy-mm-dd>/<HH:MM:SS.sssZ>    {"announced":"<when>"}
// which are still read, never written nor moved: a day's instances are the union of both. A file
// per instance cost a storm of 10,000 announcements an inode each plus a directory per dataset
// and day: half of the server's time (issue 28).
//
// Writing. announce() stores a batch (the requests that reached the API's worker together) with
// one append per dataset and day, all of them durable when it returns, with one sync for the
// batch (FileSystem::append_files). It is idempotent: an instance that its day holds already
// (in either layout) or that came earlier in the batch is not written again, so the first
// announcement's stamp stays. The check asks the day's set of times (below), not the disk once
// per instance. Batches are serialized (and one process writes a file database: its lock).
//
// Torn lines. Each append starts on a new line (io/json_lines.h): a crash mid-append tears at
// most that append's last line, never the next append. Readers skip empty lines and lines that
// do not parse (with a warning); an instance whose line was torn counts as not announced and is
// written again when announced again.
//
// Cache. The API's listings and lineage, and the check of each announcement, read a week of a
// dataset at a time: the instances of a day are kept (the newest kDaysCached days of each
// dataset) and read again only when the day's file (mtime or size) or day directory (mtime)
// differs from what was read. A read less than a second after a change of either is not kept
// (the racy rule of io/file_db/racy_read.h), nor one from a file system that tells no mtimes.
// Each read lists the dataset's directory once (a stat per entry). After an append, announce()
// keeps the day with the file's new mtime and size if the file grew by exactly what it appended
// (no one else wrote to it meanwhile), trusted although "racy", as the slot cache trusts its own
// writes; otherwise the day is read again.
//
// Thread-safety: safe to call from several threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "celos/file_system.h"
#include "celos/mutex.h"
#include "celos/state_db.h"

namespace celos {

// The day directories (yyyy-mm-dd) of `dir` that may hold times in [start, end); none when
// `dir` is missing. Used for the slots' days of the file state database (the announcements
// list their days with FileAnnouncements' own reader, which also sees the .jsonl files).
[[nodiscard]] Result<std::vector<FileStatus>> day_directories_between(FileSystem& fs,
                                                                      const std::string& dir,
                                                                      Time start, Time end);

class FileAnnouncements {
 public:
  FileAnnouncements(std::shared_ptr<FileSystem> fs, std::string root);

  // StateDatabase::announce_instances: the ones not stored yet, one append per dataset and day.
  // On an error, some days may be appended to and others not.
  [[nodiscard]] Result<void> announce(const std::vector<StateDatabase::Announcement>& all, Time now)
      EXCLUDES(write_mutex_, mutex_);
  // StateDatabase::announced_instances.
  [[nodiscard]] Result<std::vector<Time>> announced(std::string_view dataset, Time start, Time end)
      EXCLUDES(mutex_);

 private:
  using Times = std::shared_ptr<const std::vector<Time>>;  // ascending, each once
  // The day's entries as listed; -1 where an entry is absent.
  struct Stamp {
    std::int64_t directory_mtime_ns = -1;
    std::int64_t file_mtime_ns = -1;
    std::uint64_t file_size = 0;
    bool operator==(const Stamp&) const = default;
  };
  // One day of a dataset in its directory: either entry may be missing.
  struct Day {
    std::string name;                     // yyyy-mm-dd
    std::optional<FileStatus> directory;  // the per-instance files of earlier versions
    std::optional<FileStatus> packed;     // <name>.jsonl
    Stamp stamp() const;
  };
  struct Cached {
    Stamp stamp;
    Times times;
  };
  // One append of a batch: the day as listed before, what it held, the lines added.
  struct Append {
    std::string dataset;
    Day day;
    Times known;
    std::vector<Time> added;
    std::string data;
  };
  // How many days of one dataset the cache keeps (the newest).
  static constexpr std::size_t kDaysCached = 32;

  std::string dataset_dir(std::string_view dataset) const;
  std::string packed_path(std::string_view dataset, std::string_view day) const;
  // The days of `dataset` that may hold times in [start, end), by name.
  Result<std::map<std::string, Day>> days_between(const std::string& dataset, Time start, Time end);
  // A day's times, from the cache when its stamp is unchanged.
  Result<Times> times_of(const std::string& dataset, const Day& day) EXCLUDES(mutex_);
  Result<Times> read_day(const std::string& dataset, const Day& day);
  // The appends of a batch: per dataset and day, the times that day does not hold yet.
  Result<std::vector<Append>> plan(const std::vector<StateDatabase::Announcement>& all, Time now)
      EXCLUDES(mutex_);
  Result<void> plan_day(const std::string& dataset, Day day, const std::vector<Time>& times,
                        Time now, std::vector<Append>& out) EXCLUDES(mutex_);
  // After the appends (`written`: all of them durable), the cache's days take them or go.
  void remember(const std::vector<Append>& appends, bool written) EXCLUDES(mutex_);
  std::optional<Cached> appended(const Append& a);
  void keep(const std::string& dataset, const std::string& day, Cached cached) REQUIRES(mutex_);

  std::shared_ptr<FileSystem> fs_;
  std::string root_;
  // Serializes announce(), so that two batches never both append an instance: it guards the
  // files on disk, no field.
  Mutex write_mutex_;
  Mutex mutex_;
  std::map<std::string, std::map<std::string, Cached>> cache_ GUARDED_BY(mutex_);  // dataset, day
};

}  // namespace celos
