// The Catch2 main, compiled once for every test binary. Log lines of the code under test are
// hidden unless CELOS_TEST_LOG is set (e.g. CELOS_TEST_LOG=debug) to keep failures readable.
#define CATCH_CONFIG_RUNNER
#include <cstdlib>

#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>

int main(int argc, char* argv[]) {
  const char* level = std::getenv("CELOS_TEST_LOG");
  spdlog::set_level(level ? spdlog::level::from_str(level) : spdlog::level::off);
  return Catch::Session().run(argc, argv);
}
