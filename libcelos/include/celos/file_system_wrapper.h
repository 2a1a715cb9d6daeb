// The forwarding base of FileSystem decorators (celos/file_system.h).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "celos/file_system.h"

namespace celos {

// A file system that forwards every call to the one it wraps (as RocksDB's FileSystemWrapper): a
// decorator derives from it and overrides only what it changes.
class FileSystemWrapper : public FileSystem {
 public:
  explicit FileSystemWrapper(std::shared_ptr<FileSystem> target) : target_(std::move(target)) {}
  FileSystem& target() const { return *target_; }

  Result<bool> exists(const std::string& path) override { return target_->exists(path); }
  Result<std::string> read(const std::string& path) override { return target_->read(path); }
  Result<void> write_files(const std::vector<FileWrite>& files) override {
    return target_->write_files(files);
  }
  Result<void> make_dirs(const std::string& path) override { return target_->make_dirs(path); }
  Result<void> remove(const std::string& path) override { return target_->remove(path); }
  Result<void> rename(const std::string& from, const std::string& to) override {
    return target_->rename(from, to);
  }
  Result<std::vector<FileStatus>> list(const std::string& directory) override {
    return target_->list(directory);
  }
  Result<std::vector<FileStatus>> list_names(const std::string& directory) override {
    return target_->list_names(directory);
  }
  bool prefers_listing() const override { return target_->prefers_listing(); }
  Result<FileStatus> file_status(const std::string& path) override {
    return target_->file_status(path);
  }
  Result<void> append_files(const std::vector<FileWrite>& files) override {
    return target_->append_files(files);
  }
  Result<void> write_files_after(const std::vector<FileWrite>& files,
                                 const std::function<Result<void>()>& before_visible) override {
    return target_->write_files_after(files, before_visible);
  }
  Result<void> append_files_unsynced(const std::vector<FileWrite>& files) override {
    return target_->append_files_unsynced(files);
  }
  Result<void> sync_files(const std::vector<std::string>& paths) override {
    return target_->sync_files(paths);
  }

 private:
  std::shared_ptr<FileSystem> target_;
};

}  // namespace celos
