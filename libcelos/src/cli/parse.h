// Parsing the `celos` command line: the global options (anywhere on the line), a command's own
// options and positionals, times typed by people, and the usage texts.
#pragma once

#include <string>
#include <vector>

#include "celos/time.h"
#include "cli/command.h"

namespace celos::cli {

struct CommandLine {
  Globals globals;
  std::string command;            // "" = none given
  std::vector<std::string> rest;  // the command's own arguments, globals taken out
};

// Takes the global options out of `args` wherever they stand (--server URL, --token-file FILE,
// -o json|table, --tz Z, --help; also --name=value). --server defaults to env.server, then
// kDefaultCelosServer; the token to env.token (a --token-file is read later, by read_token).
// A bad global option is kInvalid.
[[nodiscard]] Result<CommandLine> parse_globals(const std::vector<std::string>& args,
                                                const CliEnvironment& env);

// The server must be an http(s):// URL (--server is checked when parsed; $CELOS_SERVER here,
// so that --help works whatever the environment holds).
[[nodiscard]] Result<void> check_server(const Globals& globals);

// The first line of globals.token_file into globals.token (kInvalid naming the file).
[[nodiscard]] Result<void> read_token(Globals& globals);

// A command's arguments by its spec: unknown options, missing values and a wrong number of
// positionals are kInvalid naming what is wrong.
[[nodiscard]] Result<Args> parse_args(const CommandSpec& spec,
                                      const std::vector<std::string>& rest);

// "UTC", "Z", "+02:00", "-05:30", or a zone of the system's tzdata ("Europe/Paris"); anything
// else is kInvalid naming it.
[[nodiscard]] Result<void> parse_tz(std::string_view text, Globals& globals);

// A time typed by a person: ISO 8601 with Z or an offset (+02:00), or without a zone (then in
// --tz), or a day (2015-09-13 = its midnight in --tz). In a --tz zone, a local time that does
// not exist (a spring-forward gap) is moved later by the gap, and one that happens twice (the
// autumn's repeated hour) is its first occurrence: the defaults of schedules in local time.
// `what` names the argument in errors.
[[nodiscard]] Result<Time> parse_input_time(std::string_view text, const Globals& globals,
                                            std::string_view what);

// The UTC text sent to the server for a typed time.
[[nodiscard]] Result<std::string> server_time(std::string_view text, const Globals& globals,
                                              std::string_view what);

// `celos CMD --help`: usage line, summary, options, global options.
std::string usage_text(const CommandSpec& spec);
// `celos --help`: every command with its synopsis.
std::string overview_text(const std::vector<CommandSpec>& table);

}  // namespace celos::cli
