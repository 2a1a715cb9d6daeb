// A TCP port on 127.0.0.1 that nothing listens on right now (for the private servers of tests).
#pragma once

namespace celos::testing {

// Throws std::runtime_error when the kernel hands out none.
int free_port();

}  // namespace celos::testing
