#include <cstdio>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "celos/deploy.h"

namespace celos {
namespace {

// Runs `report` against a reporter writing to a temporary file and returns what it wrote.
template <class Make, class Report>
std::string output_of(Make make, Report report) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::tmpfile(), &std::fclose);
  REQUIRE(file);
  auto reporter = make(file.get());
  report(*reporter);
  std::fflush(file.get());
  std::rewind(file.get());
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0;) {
    out.append(buffer, n);
  }
  return out;
}

void upload_two_files(DeployReporter& reporter) {
  reporter.step("uploading hdfs/");
  reporter.uploaded("lib/a.jar", 2048, 1, 2, 2048, 4096);
  reporter.uploaded("workflow.xml", 2048, 2, 2, 4096, 4096);
  reporter.step("deployed wc");
  reporter.finish();
}

TEST_CASE("the log reporter writes one plain line per event, for Jenkins") {
  const std::string out = output_of(make_log_reporter, upload_two_files);
  CHECK(out ==
        "celos-ci: uploading hdfs/\n"
        "celos-ci: uploaded lib/a.jar (2048 bytes) [1/2]\n"
        "celos-ci: uploaded workflow.xml (2048 bytes) [2/2]\n"
        "celos-ci: deployed wc\n");
}

TEST_CASE("the terminal reporter redraws one progress line with files and bytes") {
  const std::string out = output_of(make_terminal_reporter, upload_two_files);
  CHECK(out.find("\r\033[Kuploading 1/2 files, 2.0 KiB of 4.0 KiB (50%) lib/a.jar") !=
        std::string::npos);
  CHECK(out.find("\r\033[Kuploading 2/2 files, 4.0 KiB of 4.0 KiB (100%) workflow.xml\n"
                 "deployed wc\n") != std::string::npos);
  CHECK(out.starts_with("uploading hdfs/\n"));
}

}  // namespace
}  // namespace celos
