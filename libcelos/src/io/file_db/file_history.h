// The slot history of the file state database (SPEC §13): <db>/history/<workflow>/<slot day>.jsonl,
// append-only JSON lines, so that a step appends once per workflow and slot day instead of
// writing one file per change. A line torn by a crash is skipped by readers (with a warning).
// Retention removes a day file as a whole once its day and all its lines are old.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "celos/file_system.h"
#include "celos/mutex.h"
#include "celos/state_db.h"

namespace celos {

class FileHistory {
 public:
  FileHistory(std::shared_ptr<FileSystem> fs, std::string root)
      : fs_(std::move(fs)), root_(std::move(root)) {}

  [[nodiscard]] Result<void> append(const std::vector<SlotHistoryEntry>& entries);
  [[nodiscard]] Result<std::vector<SlotHistoryEntry>> read(const SlotId& id);
  // StateDatabase::prune_history: removes the day files of days before `before`'s day whose
  // lines all have `at` before `before`; returns how many lines went. An append to a file being
  // judged waits (one process writes a file database: its lock).
  [[nodiscard]] Result<std::size_t> prune(Time before);

 private:
  std::string path(const SlotId& id) const;
  // The entries of one file in order, torn lines skipped; kNotFound when there is no file.
  [[nodiscard]] Result<std::vector<SlotHistoryEntry>> entries(const std::string& workflow,
                                                              const std::string& path);
  // One workflow's day files before `day`: removes the old ones, adds their lines to `pruned`.
  [[nodiscard]] Result<void> prune_workflow(const std::string& workflow, const std::string& day,
                                            Time before, std::size_t& pruned);

  std::shared_ptr<FileSystem> fs_;
  std::string root_;
  // Serializes an append and a prune's read-then-remove of a file: it guards the files on
  // disk, no field.
  Mutex mutex_;
};

}  // namespace celos
