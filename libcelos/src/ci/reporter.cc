// What celos-ci prints while it works: a line redrawn in place on a terminal, plain log lines
// elsewhere (Jenkins keeps the console as a file, where carriage returns are noise).
#include <fmt/format.h>

#include "celos/deploy.h"
#include "celos/utf8.h"

namespace celos {

namespace {

std::string human_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

class LogReporter : public DeployReporter {
 public:
  explicit LogReporter(std::FILE* out) : out_(out) {}
  void step(std::string_view message) override {
    fmt::print(out_, "celos-ci: {}\n", message);
    std::fflush(out_);
  }
  void uploaded(std::string_view path, std::uint64_t bytes, std::size_t files_done,
                std::size_t files_total, std::uint64_t, std::uint64_t) override {
    fmt::print(out_, "celos-ci: uploaded {} ({} bytes) [{}/{}]\n", path, bytes, files_done,
               files_total);
    std::fflush(out_);
  }
  void finish() override {}

 private:
  std::FILE* out_;
};

class TerminalReporter : public DeployReporter {
 public:
  explicit TerminalReporter(std::FILE* out) : out_(out) {}
  void step(std::string_view message) override {
    end_progress_line();
    fmt::print(out_, "{}\n", message);
    std::fflush(out_);
  }
  void uploaded(std::string_view path, std::uint64_t, std::size_t files_done,
                std::size_t files_total, std::uint64_t bytes_done,
                std::uint64_t bytes_total) override {
    const unsigned percent =
        bytes_total == 0 ? 100u : static_cast<unsigned>(bytes_done * 100 / bytes_total);
    std::string line =
        fmt::format("uploading {}/{} files, {} of {} ({}%) {}", files_done, files_total,
                    human_bytes(bytes_done), human_bytes(bytes_total), percent, path);
    if (line.size() > 100) line = clipped(line, 97);
    fmt::print(out_, "\r\033[K{}", line);
    std::fflush(out_);
    in_progress_ = true;
  }
  void finish() override { end_progress_line(); }

 private:
  void end_progress_line() {
    if (in_progress_) fmt::print(out_, "\n");
    in_progress_ = false;
  }
  std::FILE* out_;
  bool in_progress_ = false;
};

}  // namespace

std::unique_ptr<DeployReporter> make_log_reporter(std::FILE* out) {
  return std::make_unique<LogReporter>(out);
}

std::unique_ptr<DeployReporter> make_terminal_reporter(std::FILE* out) {
  return std::make_unique<TerminalReporter>(out);
}

}  // namespace celos
