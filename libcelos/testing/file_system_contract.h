// The contract every FileSystem keeps (celos/file_system.h): one routine, run by the tests of
// each backend (memory, the local disk, WebHDFS against test/hadoop/fake_webhdfs.py, SFTP
// against a private sshd), so that the fake the scheduler stories rely on and the real file
// systems keep agreeing. Where backends genuinely differ, the caller says what its file system
// can do; the contract then checks the behaviour it promises instead (nothing is skipped).
#pragma once

#include <string>

#include "celos/file_system.h"

namespace celos::testing {

struct FileSystemCapabilities {
  // rename() onto an existing file replaces it (rename(2) on the local disk, the in-memory fake).
  // Without: the rename is refused and both files stay as they were (SFTP v3, HDFS).
  bool rename_replaces_file = false;
  // file_status() and list() tell when a file last changed (mtime_ns > 0).
  bool mtimes = true;
  // prefers_listing(): a step answers the paths waiting in one directory with one list().
  bool prefers_listing = false;
};

// Checks the contract under the directory `base`, which must not exist yet (its parent may have
// to, as on SFTP, where nothing is made above a user's directory).
void check_file_system_contract(FileSystem& fs, const std::string& base,
                                const FileSystemCapabilities& can);

}  // namespace celos::testing
