// Parsing the `celos` command line. Global options may stand anywhere, so that a command line
// can be recalled and extended at its end (`celos slots W` then `... -o json`).
#include "cli/parse.h"

#include <cctype>
#include <charconv>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "celos/time_zone.h"

namespace celos::cli {
namespace {

// A global option with a value: its canonical name, or "".
std::string global_with_value(std::string_view name) {
  if (name == "--server" || name == "--token-file" || name == "--tz") return std::string(name);
  if (name == "-o" || name == "--output") return "-o";
  return "";
}

Result<void> set_global(Globals& g, const std::string& name, const std::string& value) {
  if (name == "--server") {
    if (value.rfind("http://", 0) != 0 && value.rfind("https://", 0) != 0) {
      return usage_error(fmt::format("--server: not an http(s):// URL: \"{}\"", value));
    }
    g.server = value;
  } else if (name == "--token-file") {
    g.token_file = value;
  } else if (name == "--tz") {
    return parse_tz(value, g);
  } else if (value == "json" || value == "table") {
    g.json = value == "json";
  } else {
    return usage_error(fmt::format("-o: json or table, not \"{}\"", value));
  }
  return {};
}

// Splits "--name=value" (and "-ojson") into name and value; no value: nullopt.
std::pair<std::string, std::optional<std::string>> split_option(const std::string& arg) {
  if (arg.rfind("-o", 0) == 0 && arg.size() > 2 && arg[2] != '=') {
    return {"-o", arg.substr(2)};
  }
  const auto eq = arg.find('=');
  if (arg.rfind("--", 0) != 0 || eq == std::string::npos) return {arg, std::nullopt};
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

std::string trim_slashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

Result<CommandLine> parse_globals(const std::vector<std::string>& args, const CliEnvironment& env) {
  CommandLine line;
  line.globals.server = env.server.empty() ? kDefaultCelosServer : env.server;
  line.globals.token = env.token;
  bool options_end = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto [name, inline_value] = split_option(arg);
    const std::string global = options_end ? "" : global_with_value(name);
    if (!options_end && (arg == "--help" || arg == "-h")) {
      line.globals.help = true;
    } else if (!global.empty()) {
      if (!inline_value && i + 1 >= args.size()) {
        return usage_error(fmt::format("{} needs a value", name));
      }
      auto set = set_global(line.globals, global, inline_value ? *inline_value : args[++i]);
      if (!set) return tl::unexpected(set.error());
    } else if (line.command.empty() && !options_end && arg.rfind("-", 0) != 0) {
      line.command = arg;
    } else {
      options_end = options_end || arg == "--";
      line.rest.push_back(arg);
    }
  }
  line.globals.server = trim_slashes(line.globals.server);
  return line;
}

Result<void> check_server(const Globals& globals) {
  const std::string& server = globals.server;
  if (server.rfind("http://", 0) != 0 && server.rfind("https://", 0) != 0) {
    return usage_error(fmt::format("CELOS_SERVER: not an http(s):// URL: \"{}\"", server));
  }
  return {};
}

Result<void> read_token(Globals& globals) {
  if (globals.token_file.empty()) return {};
  std::ifstream in(globals.token_file);
  std::string token;
  if (!in || !std::getline(in, token)) {
    return usage_error(fmt::format("--token-file: cannot read \"{}\"", globals.token_file));
  }
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) {
    return usage_error(
        fmt::format("--token-file: \"{}\" has no token on its first line", globals.token_file));
  }
  globals.token = token;
  return {};
}

namespace {

const OptionSpec* find_option(const CommandSpec& spec, std::string_view name) {
  for (const OptionSpec& o : spec.options) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

bool looks_like_option(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1]));
}

}  // namespace

Result<Args> parse_args(const CommandSpec& spec, const std::vector<std::string>& rest) {
  Args args;
  bool options_end = false;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const std::string& arg = rest[i];
    if (!options_end && arg == "--") {
      options_end = true;
      continue;
    }
    if (options_end || !looks_like_option(arg)) {
      args.positional.push_back(arg);
      continue;
    }
    auto [name, inline_value] = split_option(arg);
    const OptionSpec* option = find_option(spec, name);
    if (option == nullptr) return usage_error(fmt::format("unknown option {}", name));
    if (option->value.empty()) {
      if (inline_value) return usage_error(fmt::format("{} takes no value", name));
      args.flags.insert(name);
    } else if (inline_value || i + 1 < rest.size()) {
      args.values[name] = inline_value ? *inline_value : rest[++i];
    } else {
      return usage_error(fmt::format("{} needs a value ({})", name, option->value));
    }
  }
  if (args.positional.size() < spec.min_args) return usage_error("missing arguments");
  if (args.positional.size() > spec.max_args) {
    return usage_error(fmt::format("unexpected argument \"{}\"", args.positional[spec.max_args]));
  }
  return args;
}

namespace {

// "+02:00" -> 120 minutes; nullopt when not an offset.
std::optional<std::chrono::minutes> parse_offset(std::string_view text) {
  if (text.size() != 6 || (text[0] != '+' && text[0] != '-') || text[3] != ':') return {};
  int hours = 0, minutes = 0;
  const char* p = text.data();
  if (std::from_chars(p + 1, p + 3, hours).ptr != p + 3) return {};
  if (std::from_chars(p + 4, p + 6, minutes).ptr != p + 6) return {};
  if (hours > 23 || minutes > 59) return {};
  const std::chrono::minutes offset(hours * 60 + minutes);
  return text[0] == '-' ? -offset : offset;
}

}  // namespace

Result<void> parse_tz(std::string_view text, Globals& globals) {
  globals.zone.reset();
  if (text == "UTC" || text == "Z" || text == "utc") {
    globals.tz = std::chrono::minutes(0);
    globals.tz_label = "Z";
    return {};
  }
  if (const auto offset = parse_offset(text)) {
    globals.tz = *offset;
    globals.tz_label = offset->count() == 0 ? "Z" : std::string(text);
    return {};
  }
  auto zone = TimeZone::load(text);
  if (!zone) {
    return usage_error(
        fmt::format("--tz: \"{}\" is not UTC, an offset like +02:00 or a time zone: {}", text,
                    zone.error().message));
  }
  globals.zone = std::move(*zone);
  return {};
}

Result<Time> parse_input_time(std::string_view text, const Globals& globals,
                              std::string_view what) {
  std::string local(text);
  std::optional<std::chrono::minutes> offset;  // none: the time is in --tz
  if (local.size() == 10) local += "T00:00";   // a day
  if (local.size() > 6) {
    if (auto o = parse_offset(std::string_view(local).substr(local.size() - 6))) {
      offset = *o;
      local.resize(local.size() - 6);
    } else if (local.back() == 'Z') {
      offset = std::chrono::minutes(0);
      local.pop_back();
    }
  }
  auto t = parse_time(local + "Z");
  if (!t) {
    return usage_error(fmt::format("{}: not a time: \"{}\" (e.g. 2015-09-13T13:00Z)", what, text));
  }
  if (offset) return *t - *offset;
  if (globals.zone) return globals.zone->from_local(to_civil(*t)).first;
  return *t - globals.tz;
}

Result<std::string> server_time(std::string_view text, const Globals& globals,
                                std::string_view what) {
  auto t = parse_input_time(text, globals, what);
  if (!t) return tl::unexpected(t.error());
  return format_time(*t);
}

namespace {

// `text` with line breaks between words so that no line is longer than `width`.
std::string wrap(std::string_view text, std::size_t width = 96) {
  std::string out;
  std::size_t line = 0;
  while (!text.empty()) {
    const auto space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    if (line > 0 && line + 1 + word.size() > width) {
      out += '\n';
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out += word;
    line += word.size();
    text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
  }
  return out;
}

std::string options_block(const std::vector<OptionSpec>& options) {
  std::string out;
  for (const OptionSpec& o : options) {
    const std::string left = o.value.empty() ? o.name : o.name + " " + o.value;
    out += fmt::format("  {:<22} {}\n", left, o.help);
  }
  return out;
}

constexpr const char* kGlobalHelp =
    "global options (before or after the command):\n"
    "  --server URL           celos-server's URL (default $CELOS_SERVER, else {})\n"
    "  --token-file FILE      the bearer token is FILE's first line (default $CELOS_TOKEN)\n"
    "  -o json|table          json: the answer of the route behind the command, unchanged\n"
    "  --tz Z                 times in UTC (default), at an offset (+02:00) or in a zone\n"
    "                         (Europe/Paris)\n"
    "  --help                 this help\n"
    "exit codes: 0 ok, 1 the server answered an error or refused, 2 bad usage, 3 no "
    "connection\n";

}  // namespace

std::string usage_text(const CommandSpec& spec) {
  std::string out = fmt::format("usage: celos {}{}{}\n{}\n", spec.name,
                                spec.synopsis.empty() ? "" : " ", spec.synopsis, spec.summary);
  if (!spec.options.empty()) out += "\noptions:\n" + options_block(spec.options);
  if (!spec.details.empty()) out += "\n" + wrap(spec.details) + "\n";
  if (!spec.routes.empty()) out += "\nroutes: " + fmt::format("{}", fmt::join(spec.routes, ", "));
  return out + "\n\n" + fmt::format(kGlobalHelp, kDefaultCelosServer);
}

std::string overview_text(const std::vector<CommandSpec>& table) {
  std::string out = "usage: celos [global options] COMMAND [arguments]\n\ncommands:\n";
  for (const CommandSpec& spec : table) {
    out += fmt::format("  {:<12} {}\n", spec.name, spec.summary);
  }
  out += "\n'celos COMMAND --help' shows a command's arguments.\n\n";
  return out + fmt::format(kGlobalHelp, kDefaultCelosServer);
}

}  // namespace celos::cli
