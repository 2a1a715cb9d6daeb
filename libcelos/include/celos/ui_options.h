// celos-ui's command line (SPEC §8) and its start-up. Parsing and every start-up check live in
// the library so that each rejection ("a clear message and a non-zero exit") is unit-tested;
// celos-ui/main.cc only parses, prints and runs.
//
// Adding a flag: a member of UiOptions, a line in describe_ui_options() and in ui_options_from()
// (libcelos/src/ui/ui_command_line.cc), a test beside it, and a row in docs/command-line.md.
#pragma once

#include <optional>
#include <string>

#include "celos/error.h"
#include "celos/host_check.h"
#include "celos/ui.h"

namespace celos {

struct UiOptions {
  int port = -1;                             // --port (required; 0 = any free port)
  std::string host = "127.0.0.1";            // --host
  std::string celos_url;                     // --celos (required, http:// or https://)
  std::string hue_url;                       // --hue (optional, http:// or https://)
  std::string config_path;                   // --config (optional; checked once at start-up)
  std::string token_file;                    // --celos-token-file (optional)
  std::optional<std::string> allowed_hosts;  // --allowed-hosts; nullopt = the default list
};

// What the command line asked for: options to run, or a text to print and exit 0 (--help,
// --version).
struct UiCommandLine {
  std::optional<UiOptions> options;
  std::string print;
};

// Parses and validates celos-ui's arguments (argv[0] is the program name): --port in 0..65535,
// --celos given and an http(s) URL, --hue an http(s) URL, --allowed-hosts a valid list. Errors
// are kInvalid with one line (no newline) that names the flag; the caller exits 2. `version` is
// printed for --version.
[[nodiscard]] Result<UiCommandLine> parse_ui_command_line(int argc, const char* const* argv,
                                                          const std::string& version);

// The start-up checks that read files, each an error naming the file (exit 2): the --config
// file must parse (a typo is a start-up error, not a grid that silently lost its groups), and
// the --celos-token-file must hold a token on its first line. Returns the token ("" without a
// token file).
[[nodiscard]] Result<std::string> check_ui_files(const UiOptions& options);

// The Host/Origin policy of the UI: --allowed-hosts, or the default list (celos/host_check.h).
HostPolicy ui_host_policy(const UiOptions& options);

}  // namespace celos

namespace celos {

// Runs celos-ui (libcelos/src/server/ui_server.cc): checks the files (check_ui_files), logs to
// standard error in UTC, serves the grid with the Host/Origin checks until SIGTERM or SIGINT,
// then stops. Errors are start-up errors (kInvalid: exit 2; others: exit 1).
[[nodiscard]] Result<void> run_ui_server(const UiOptions& options, const std::string& version);

}  // namespace celos
