#include "testing/source_dir.h"

#include "testing/source_dir_paths.h"

namespace celos::testing {

const std::string& source_dir() {
  static const std::string dir = CELOS_SOURCE_DIR;
  return dir;
}

}  // namespace celos::testing
