#include "io/backward_lines.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace celos {
namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads exactly `size` bytes at `offset` (the file only grows while we read).
Result<void> read_at(int fd, char* out, std::size_t size, off_t offset, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::pread(fd, out, size, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return fail(
          fmt::format("cannot read {}: {}", path, n < 0 ? std::strerror(errno) : "short read"));
    }
    out += n;
    size -= static_cast<std::size_t>(n);
    offset += n;
  }
  return {};
}

// The part of a line seen so far (its end; earlier blocks are prepended), or "too long".
class Carry {
 public:
  explicit Carry(std::size_t max) : max_(max) {}
  void prepend(std::string_view piece) {
    if (overlong_) return;
    if (text_.size() + piece.size() > max_) {
      overlong_ = true;
      text_.clear();
      return;
    }
    text_.insert(0, piece);
  }
  // Calls `line` with the completed line (unless too long) and starts the next one.
  bool finish(std::string_view head, const std::function<bool(std::string_view)>& line) {
    prepend(head);
    const bool skip = overlong_ || text_.empty();
    const bool go_on = skip || line(text_);
    text_.clear();
    overlong_ = false;
    return go_on;
  }

 private:
  std::size_t max_;
  std::string text_;
  bool overlong_ = false;
};

}  // namespace

Result<void> for_each_line_backwards(const std::string& path,
                                     const std::function<bool(std::string_view)>& line,
                                     std::size_t max_line, std::size_t block) {
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) {
    if (errno == ENOENT) return {};
    return fail(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) {
    return fail(fmt::format("cannot stat {}: {}", path, std::strerror(errno)));
  }
  off_t pos = info.st_size;
  std::vector<char> buffer(block);
  Carry carry(max_line);
  while (pos > 0) {
    const auto size = static_cast<std::size_t>(std::min<off_t>(pos, static_cast<off_t>(block)));
    pos -= static_cast<off_t>(size);
    if (auto ok = read_at(file.fd, buffer.data(), size, pos, path); !ok) return ok;
    std::size_t end = size;
    for (std::size_t i = size; i-- > 0;) {
      if (buffer[i] != '\n') continue;
      if (!carry.finish(std::string_view(buffer.data() + i + 1, end - i - 1), line)) return {};
      end = i;
    }
    carry.prepend(std::string_view(buffer.data(), end));
  }
  carry.finish({}, line);
  return {};
}

}  // namespace celos
