#include "celos/reload.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace celos;

TEST_CASE("reload hooks run in order, a failing or throwing one does not stop the others") {
  ReloadHooks hooks;
  std::vector<std::string> ran;
  hooks.add("first", [&]() -> Result<void> {
    ran.push_back("first");
    return {};
  });
  hooks.add("broken", [&]() -> Result<void> {
    ran.push_back("broken");
    return fail("no such file");
  });
  hooks.add("throwing", [&]() -> Result<void> {
    ran.push_back("throwing");
    throw std::runtime_error("boom");
  });
  hooks.add("last", [&]() -> Result<void> {
    ran.push_back("last");
    return {};
  });
  CHECK(hooks.run() == 2);
  CHECK(ran == std::vector<std::string>{"first", "broken", "throwing", "last"});
  CHECK(ReloadHooks().run() == 0);
}
