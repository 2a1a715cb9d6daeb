// `celos`, the operators' command line (issue 31): talks to a celos-server over its /api/v1
// routes and prints the answers for people (aligned tables, colours on a terminal, UTC or a
// fixed --tz offset) or unchanged for programs (`-o json`).
//
//   celos [global options] COMMAND [arguments] [global options]
//
// Everything but main() lives here: main.cc reads the environment, decides whether stdout is a
// terminal, makes the curl HttpClient and calls run_cli. Tests pass a fake HttpClient, a manual
// clock and string streams.
//
// Exit codes (kExit*): 0 ok; 1 the server answered an error (status >= 400) or refused the
// operation; 2 bad usage (the command's usage is printed); 3 no connection to the server.
// Errors are one line on `err`; a server's JSON error is printed as received, on one line.
// Not thread-safe; one call per process in practice.
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>
#include <vector>

#include "celos/clock.h"
#include "celos/http_client.h"

namespace celos {

inline constexpr int kExitOk = 0;
inline constexpr int kExitServerError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNoConnection = 3;

// The server used without --server and $CELOS_SERVER: the address of the quickstart and docs.
inline constexpr const char* kDefaultCelosServer = "http://127.0.0.1:8080";

// What main() reads from the process: the environment and whether stdout is a terminal.
struct CliEnvironment {
  std::string server = {};     // $CELOS_SERVER ("" = unset)
  std::string token = {};      // $CELOS_TOKEN: the bearer token itself ("" = unset)
  std::string ui_config = {};  // $CELOS_UI_CONFIG: celos-ui's groups file, for status --group
  bool terminal = false;       // stdout is a terminal: colours, progress
};

// Runs one command line (`args` without the program name). `clock` paces the polls of
// `log --follow` and `maintenance --wait`. Returns the exit code.
int run_cli(const std::vector<std::string>& args, const CliEnvironment& env, HttpClient& http,
            Clock& clock, std::ostream& out, std::ostream& err);

// The command table as data, for the route-coverage test and the completion file.
struct CliCommandInfo {
  std::string name;
  std::vector<std::string> options;  // "--from", ...
  // The routes behind the command, "METHOD /path" as the OpenAPI document names them
  // ("GET /api/v1/datasets/{id}/instances").
  std::vector<std::string> routes;
};
std::vector<CliCommandInfo> cli_commands();

}  // namespace celos
