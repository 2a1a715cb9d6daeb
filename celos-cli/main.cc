// celos: the operators' command line (issue 31). Everything but the wiring is in libcelos
// (celos/cli.h): here the environment is read, stdout is asked whether it is a terminal, and the
// curl client and the real clock are passed in.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include "celos/cli.h"
#include "celos/clock.h"
#include "celos/http_client.h"

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// Colours only on a terminal, and not when NO_COLOR is set or the terminal is dumb.
bool colour_terminal() {
  return ::isatty(STDOUT_FILENO) == 1 && env("NO_COLOR").empty() && env("TERM") != "dumb";
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    const celos::CliEnvironment environment{.server = env("CELOS_SERVER"),
                                            .token = env("CELOS_TOKEN"),
                                            .ui_config = env("CELOS_UI_CONFIG"),
                                            .terminal = colour_terminal()};
    // A mutation waits for a running step on the server: up to its --io-timeout (30 s).
    auto http = celos::make_curl_http_client(
        {.connect_timeout = std::chrono::seconds(5), .total_timeout = std::chrono::seconds(120)});
    const int code =
        celos::run_cli(args, environment, *http, celos::system_clock(), std::cout, std::cerr);
    std::cout.flush();
    return code;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "celos: internal error: " << e.what() << '\n';
    return 1;
  }
}
