#include <filesystem>

#include <catch2/catch.hpp>
#include <spdlog/logger.h>

#include "celos/logging.h"
#include "testing/temp_dir.h"

using namespace celos;

namespace {

struct Log {
  testing::TempDir dir;
  Time now = make_time(2015, 9, 13, 23, 59);
  std::shared_ptr<spdlog::logger> logger;

  Log() { open(); }
  void open() {
    logger = std::make_shared<spdlog::logger>(
        "test", make_daily_log_sink(dir.path(), 2, [this] { return now; }));
    logger->set_pattern("%v");
    logger->flush_on(spdlog::level::info);
  }
};

}  // namespace

TEST_CASE("lines go to celos.log until the UTC day changes, then the day is rolled") {
  Log log;
  log.logger->info("first");
  CHECK(testing::read_text_file(log.dir / "celos.log") == "first\n");
  log.now = make_time(2015, 9, 14, 0, 1);
  log.logger->info("second");
  CHECK(testing::read_text_file(log.dir / "celos.log.2015-09-13") == "first\n");
  CHECK(testing::read_text_file(log.dir / "celos.log") == "second\n");
}

TEST_CASE("only the newest rolled files are kept") {
  Log log;
  for (int day = 14; day <= 17; ++day) {
    log.logger->info("line");
    log.now = make_time(2015, 9, day, 12);
  }
  log.logger->info("last");
  CHECK_FALSE(std::filesystem::exists(log.dir / "celos.log.2015-09-13"));
  CHECK_FALSE(std::filesystem::exists(log.dir / "celos.log.2015-09-14"));
  CHECK(std::filesystem::exists(log.dir / "celos.log.2015-09-15"));
  CHECK(std::filesystem::exists(log.dir / "celos.log.2015-09-16"));
}

TEST_CASE("a celos.log left from an earlier day is rolled when the sink opens") {
  Log log;
  log.logger->info("old");
  log.logger.reset();
  // The file's mtime is today (wall clock); the sink's clock says a later day.
  log.now = Time{std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())} +
            std::chrono::hours(48);
  log.open();
  log.logger->info("new");
  CHECK(testing::read_text_file(log.dir / "celos.log") == "new\n");
}

TEST_CASE("reopening (SIGHUP) continues in a new celos.log after the old one was moved away") {
  Log log;
  log.logger->info("before");
  std::filesystem::rename(log.dir / "celos.log", log.dir / "moved.log");
  REQUIRE(reopen_daily_log_sink(*log.logger->sinks().front()));
  log.logger->info("after");
  CHECK(testing::read_text_file(log.dir / "moved.log") == "before\n");
  CHECK(testing::read_text_file(log.dir / "celos.log") == "after\n");
}
