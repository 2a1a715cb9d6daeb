// The pieces of the `celos` command line (celos/cli.h) that its files share: the parsed
// arguments, the context a command runs in, and a command's entry in the table.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "celos/cli.h"
#include "celos/error.h"
#include "celos/time_zone.h"

namespace celos::cli {

// The options every command accepts, before or after the command's name.
struct Globals {
  std::string server;      // base URL without a trailing slash
  std::string token_file;  // --token-file ("" = none)
  std::string token;       // the bearer token ("" = none)
  bool json = false;       // -o json
  bool help = false;       // --help / -h
  // --tz: a fixed offset (tz, printed as tz_label: "Z" or "+02:00"), or a zone (its offset at
  // each instant; tz and tz_label are then unused).
  std::chrono::minutes tz{0};
  std::string tz_label = "Z";
  std::optional<TimeZone> zone;
};

// A command's own arguments: positionals in order, options with a value, flags.
struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string, std::less<>> values;
  std::set<std::string, std::less<>> flags;

  bool has(std::string_view name) const { return flags.count(name) || values.count(name); }
  // The value of option `name` ("--from"), or nullptr.
  const std::string* value(std::string_view name) const {
    const auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  }
};

struct Context {
  HttpClient& http;
  Clock& clock;
  std::ostream& out;
  std::ostream& err;
  const CliEnvironment& env;
  Globals globals;
  bool color = false;  // stdout is a terminal and -o json is not asked
};

// An option of a command: a flag when `value` is empty, else the name of its value.
struct OptionSpec {
  std::string name = {};   // "--from"
  std::string value = {};  // "T", or "" for a flag
  std::string help = {};
};

// A command's outcome: nothing, or an Error whose code decides the exit code: kInvalid = bad
// usage (2, with the usage), kUnavailable = no connection (3), anything else 1.
using Outcome = Result<void>;

struct CommandSpec {
  std::string name = {};
  std::string synopsis = {};  // the arguments after the name: "W [--from T --to T]"
  std::string summary = {};   // one line
  std::vector<OptionSpec> options = {};
  std::size_t min_args = 0;
  std::size_t max_args = 0;
  std::vector<std::string> routes = {};  // "GET /api/v1/workflow-slots"
  std::string details = {};              // more help text, printed after the options
  std::function<Outcome(Context&, const Args&)> run = {};
  // Runs here without a server (simulate, plan): no server or token is needed, and an error
  // of its run (a bad scenario file) is not followed by the usage.
  bool local = false;
};

// Usage errors (exit 2).
[[nodiscard]] inline tl::unexpected<Error> usage_error(std::string message) {
  return fail(std::move(message), ErrorCode::kInvalid);
}

// The table, in the order `celos --help` lists it (commands.cc), and its parts by file.
const std::vector<CommandSpec>& command_table();
std::vector<CommandSpec> slot_commands();      // cmd_slots.cc
std::vector<CommandSpec> change_commands();    // cmd_change.cc
std::vector<CommandSpec> server_commands();    // cmd_server.cc
std::vector<CommandSpec> data_commands();      // cmd_data.cc
std::vector<CommandSpec> backfill_commands();  // cmd_backfill.cc
std::vector<CommandSpec> local_commands();     // cmd_sim.cc
std::vector<CommandSpec> deadline_commands();  // cmd_deadline.cc
CommandSpec log_command();                     // cmd_log.cc
// The length of the longest end of `before` that starts `now` (log --follow: what is new).
std::size_t log_overlap(std::string_view before, std::string_view now);

}  // namespace celos::cli
