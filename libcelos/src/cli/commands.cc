// The command table and run_cli: globals, the command's own arguments, the run, the exit code.
// Commands live in files by what they touch (cmd_slots.cc: reading slots; cmd_change.cc:
// changing them; cmd_server.cc: the server and cluster; cmd_data.cc: datasets and lineage;
// cmd_deadline.cc: deadlines).
#include <ostream>

#include <fmt/format.h>

#include "celos/cli.h"
#include "cli/command.h"
#include "cli/parse.h"

namespace celos::cli {
namespace {

std::vector<CommandSpec> make_table() {
  std::vector<CommandSpec> table;
  for (auto part : {slot_commands, change_commands, data_commands, backfill_commands,
                    deadline_commands, server_commands, local_commands}) {
    for (CommandSpec& spec : part()) table.push_back(std::move(spec));
  }
  return table;
}

const CommandSpec* find_command(std::string_view name) {
  for (const CommandSpec& spec : command_table()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

int exit_code(const Error& error) {
  if (error.code == ErrorCode::kInvalid) return kExitUsage;
  if (error.code == ErrorCode::kUnavailable) return kExitNoConnection;
  return kExitServerError;
}

// `celos help [COMMAND]`.
int help(const std::vector<std::string>& rest, std::ostream& out, std::ostream& err) {
  if (rest.empty()) {
    out << overview_text(command_table());
    return kExitOk;
  }
  const CommandSpec* spec = find_command(rest.front());
  if (spec == nullptr) {
    err << fmt::format("celos: unknown command \"{}\"\n\n", rest.front())
        << overview_text(command_table());
    return kExitUsage;
  }
  out << usage_text(*spec);
  return kExitOk;
}

int run_command(const CommandSpec& spec, CommandLine& line, const CliEnvironment& env,
                HttpClient& http, Clock& clock, std::ostream& out, std::ostream& err) {
  if (line.globals.help) {
    out << usage_text(spec);
    return kExitOk;
  }
  auto args = parse_args(spec, line.rest);
  Outcome outcome = spec.local ? Outcome{} : check_server(line.globals);
  if (outcome && !args) outcome = tl::unexpected(args.error());
  if (outcome && !spec.local) outcome = read_token(line.globals);
  const bool usage_failed = !outcome;
  if (outcome) {
    Context ctx{http, clock, out, err, env, line.globals, env.terminal && !line.globals.json};
    outcome = spec.run(ctx, *args);
  }
  if (outcome) return kExitOk;
  out.flush();
  err << fmt::format("celos {}: {}\n", spec.name, outcome.error().message);
  const int code = exit_code(outcome.error());
  if (code == kExitUsage && (usage_failed || !spec.local)) err << '\n' << usage_text(spec);
  return code;
}

}  // namespace

const std::vector<CommandSpec>& command_table() {
  static const std::vector<CommandSpec> table = make_table();
  return table;
}

}  // namespace celos::cli

namespace celos {

int run_cli(const std::vector<std::string>& args, const CliEnvironment& env, HttpClient& http,
            Clock& clock, std::ostream& out, std::ostream& err) {
  auto line = cli::parse_globals(args, env);
  if (!line) {
    err << "celos: " << line.error().message << "\n\n" << cli::overview_text(cli::command_table());
    return kExitUsage;
  }
  if (line->command.empty() || line->command == "help") {
    if (line->command.empty() && !line->globals.help) {
      err << cli::overview_text(cli::command_table());
      return kExitUsage;
    }
    return cli::help(line->rest, out, err);
  }
  const cli::CommandSpec* spec = cli::find_command(line->command);
  if (spec == nullptr) {
    err << fmt::format("celos: unknown command \"{}\" (celos --help lists them)\n", line->command);
    return kExitUsage;
  }
  return cli::run_command(*spec, *line, env, http, clock, out, err);
}

std::vector<CliCommandInfo> cli_commands() {
  std::vector<CliCommandInfo> out;
  for (const cli::CommandSpec& spec : cli::command_table()) {
    CliCommandInfo info{spec.name, {}, spec.routes};
    for (const auto& option : spec.options) info.options.push_back(option.name);
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace celos
