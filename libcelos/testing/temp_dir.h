// A temporary directory for a test, removed with everything in it when the object dies.
#pragma once

#include <string>

namespace celos::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + relative
  std::string operator/(const std::string& relative) const { return path_ + "/" + relative; }

 private:
  std::string path_;
};

// Writes a file, creating its parent directories (test set-up; throws on failure).
void write_text_file(const std::string& path, const std::string& text);
// Reads a whole file (throws on failure).
std::string read_text_file(const std::string& path);

}  // namespace celos::testing
