// celos-ui: parses the command line (SPEC §8) and serves the grid (SPEC §9) until SIGTERM or
// SIGINT. Everything else lives in libcelos (celos/ui_options.h, celos/ui.h).
#include <iostream>

#include "celos/ui_options.h"
#include "celos/version.h"

int main(int argc, char** argv) try {
  auto line = celos::parse_ui_command_line(argc, argv, CELOS_VERSION);
  if (!line) {
    std::cerr << "celos-ui: " << line.error().message << "\n";
    return 2;
  }
  if (!line->options) {
    std::cout << line->print;
    return 0;
  }
  if (auto ran = celos::run_ui_server(*line->options, CELOS_VERSION); !ran) {
    std::cerr << "celos-ui: " << ran.error().message << "\n";
    return ran.error().code == celos::ErrorCode::kInvalid ? 2 : 1;
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "celos-ui: " << e.what() << "\n";
  return 1;
}
