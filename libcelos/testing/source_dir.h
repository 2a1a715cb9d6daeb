// Where the checkout is, for tests that read their test data or start the fakes of test/.
//
// A function, not a macro in the tests: only source_dir.cc depends on the checkout's path, so a
// clone elsewhere still hits ccache for every test file (CI's checkout need not sit where the
// cache was filled, and a unity batch holding one such test would miss as a whole).
#pragma once

#include <string>

namespace celos::testing {

// The checkout's root, e.g. "/src/celos" (no trailing slash).
const std::string& source_dir();

}  // namespace celos::testing
