// celos-server: parses the command line (SPEC §8) and runs the scheduler's HTTP API (SPEC §6)
// until SIGTERM/SIGINT. Everything with behaviour lives in libcelos (celos/server_options.h,
// celos/server.h).
#include <exception>
#include <iostream>
#if defined(__GLIBC__)  // (defined by the headers above)
#include <malloc.h>
#endif

#include "celos/server.h"
#include "celos/server_options.h"
#include "celos/version.h"

int main(int argc, char** argv) try {
#if defined(__GLIBC__)
  // The step's executor threads would each get a malloc arena of their own (up to 8 per core);
  // a few arenas keep the memory of a first step of 10,000 workflows from fragmenting.
  ::mallopt(M_ARENA_MAX, 4);
#endif
  auto command_line = celos::parse_server_command_line(argc, argv, CELOS_VERSION);
  if (!command_line) {
    std::cerr << "celos-server: " << command_line.error().message << "\n";
    return 2;
  }
  if (!command_line->options) {
    std::cout << command_line->print;
    return 0;
  }
  const celos::ServerOptions& opts = *command_line->options;
  if (!opts.import_db_dir.empty()) return celos::import_db(opts, std::cout, std::cerr);
  if (auto ran = celos::run_server(opts, CELOS_VERSION); !ran) {
    if (ran.error().code == celos::ErrorCode::kInvalid) {
      std::cerr << "celos-server: " << ran.error().message << "\n";
      return 2;
    }
    celos::report_server_failure(ran.error().message);
    return 1;
  }
  return 0;
} catch (const std::exception& e) {
  // Once logging is set up, the log has it too (its console sink is stderr).
  celos::report_server_failure(e.what());
  return 1;
}
