// Reads the tail of a job's output with pread from the end, so that a multi-gigabyte stdout is
// never loaded; and never outside the jobs directory: the ids are checked as path components,
// and the opened file's real path must lie under the jobs directory's real path.
#include "celos/job_output.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace celos {
namespace {

bool safe_component(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

Result<std::string> real_path(const std::string& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) {
    const int err = errno;
    return fail(fmt::format("no job output {}: {}", path, std::strerror(err)),
                err == ENOENT || err == ENOTDIR ? ErrorCode::kNotFound : ErrorCode::kFailed);
  }
  return std::string(buffer);
}

Result<std::string> read_tail(int fd, const std::string& path, std::size_t tail) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return fail("job output is not a regular file: " + path, ErrorCode::kNotFound);
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  const std::size_t length = std::min(size, tail);
  std::string data(length, '\0');
  std::size_t done = 0;
  while (done < length) {
    const ssize_t n =
        ::pread(fd, data.data() + done, length - done, static_cast<off_t>(size - length + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    if (n == 0) break;  // truncated meanwhile
    done += static_cast<std::size_t>(n);
  }
  data.resize(done);
  if (length < size) {  // cut inside a UTF-8 sequence: drop its continuation bytes
    std::size_t skip = 0;
    while (skip < 3 && skip < data.size() &&
           (static_cast<unsigned char>(data[skip]) & 0xC0) == 0x80) {
      ++skip;
    }
    data.erase(0, skip);
  }
  return data;
}

}  // namespace

Result<std::string> read_job_output(const std::string& jobs_dir, const SlotId& slot,
                                    const std::string& external_id, std::string_view stream,
                                    std::size_t tail) {
  if (stream != "stdout" && stream != "stderr") {
    return fail("stream must be stdout or stderr", ErrorCode::kInvalid);
  }
  if (!safe_component(slot.workflow) || !safe_component(external_id)) {
    return fail(fmt::format("external id \"{}\" of slot {} cannot name a job directory",
                            external_id, to_string(slot)),
                ErrorCode::kInvalid);
  }
  const std::string path =
      fmt::format("{}/{}/{}/{}/{}/{}", jobs_dir, slot.workflow, format_day(slot.time),
                  format_time_of_day(slot.time), external_id, stream);
  auto root = real_path(jobs_dir);
  if (!root) return tl::unexpected(root.error());
  auto real = real_path(path);
  if (!real) return tl::unexpected(real.error());
  if (real->rfind(*root + "/", 0) != 0) {
    return fail(fmt::format("job output {} lies outside the jobs directory", path),
                ErrorCode::kInvalid);
  }
  const int fd = ::open(real->c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    return fail(fmt::format("cannot open {}: {}", path, std::strerror(errno)),
                errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kFailed);
  }
  auto data = read_tail(fd, path, tail);
  ::close(fd);
  return data;
}

}  // namespace celos
