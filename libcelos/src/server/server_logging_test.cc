// celos-server's log set-up and how a failure is reported before and after it.
#include "server/server_logging.h"

#include <iostream>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>

#include "celos/logging.h"
#include "celos/server.h"
#include "testing/temp_dir.h"

using namespace celos;

namespace {

// Standard error, captured for the life of the object.
class CapturedStderr {
 public:
  CapturedStderr() : old_(std::cerr.rdbuf(text_.rdbuf())) {}
  ~CapturedStderr() { std::cerr.rdbuf(old_); }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* old_;
};

// The default logger, put back when the test ends.
class KeptDefaultLogger {
 public:
  ~KeptDefaultLogger() { spdlog::set_default_logger(old_); }

 private:
  std::shared_ptr<spdlog::logger> old_ = spdlog::default_logger();
};

}  // namespace

TEST_CASE("before logging is set up a failure goes to standard error only") {
  KeptDefaultLogger kept;
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("other"));
  CapturedStderr err;
  report_server_failure("cannot listen");
  CHECK(err.text() == "celos-server: cannot listen\n");
}

TEST_CASE("the server's log: lines in UTC with their level in <logs>/celos.log, failures too") {
  KeptDefaultLogger kept;
  testing::TempDir logs;
  auto sink = setup_server_logging(logs.path());
  REQUIRE(sink);
  CHECK(spdlog::default_logger()->name() == "celos");
  CapturedStderr err;  // (spdlog's console sink writes to the stream stderr, not std::cerr)
  spdlog::info("hello {}", 1);
  report_server_failure("lost the database");
  const std::string text = testing::read_text_file(logs / "celos.log");
  CHECK(std::regex_search(text,
                          std::regex(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info hello 1\n)")));
  CHECK_THAT(text, Catch::EndsWith("Z critical celos-server: lost the database\n"));
  CHECK(err.text().empty());  // reported once, through the log
  // SIGHUP's reopen works on the returned sink.
  CHECK(reopen_daily_log_sink(*sink));
}
