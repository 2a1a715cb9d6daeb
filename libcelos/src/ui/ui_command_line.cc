// celos-ui's command line (SPEC §8). See celos/ui_options.h.
#include <fstream>
#include <sstream>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "celos/ui_options.h"

namespace celos {
namespace po = boost::program_options;

namespace {

constexpr const char* kUiUsage =
    "Usage: celos-ui --port N --celos URL [--hue URL] [--config FILE] [--host ADDR]\n"
    "                [--allowed-hosts H,...] [--celos-token-file FILE]\n"
    "Serves the workflow grid at /ui?time=<ISO UTC>&zoom=<minutes>"
    "[&filter=<id part>][&refresh=<seconds>];\n"
    "a click on a slot opens its details (/slot), with a range rerun preview.\n\n";

po::options_description describe_ui_options() {
  const UiOptions d;
  po::options_description options("celos-ui options");
  options.add_options()("help", "print this help and exit")(
      "version", "print the version and exit")("port", po::value<int>(),
                                               "HTTP port of the UI (required; 0 = any free port)")(
      "celos", po::value<std::string>(),
      "URL of celos-server, e.g. http://127.0.0.1:8080 (required)")(
      "hue", po::value<std::string>(),
      "URL of Hue; slots with an external id link to <hue>/list_oozie_workflow/<id>")(
      "config", po::value<std::string>(),
      "JSON file grouping workflows: {\"groups\": [{\"name\", \"workflows\": []}]}; re-read "
      "when it changes")("host", po::value<std::string>()->default_value(d.host),
                         "address to listen on (0.0.0.0 for all)")(
      "allowed-hosts", po::value<std::string>(),
      "Host names this UI answers to, comma-separated ('*' = any; default: localhost, "
      "127.0.0.1, ::1, --host and the machine's name); POSTs from pages of other hosts are "
      "refused")(
      "celos-token-file", po::value<std::string>(),
      "file holding the bearer token sent to celos-server on every request (whoever reaches "
      "the UI acts with its role)");
  return options;
}

bool is_http_url(const std::string& url) {
  return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
}

std::string text_or(const po::variables_map& vm, const char* name) {
  return vm.count(name) ? vm[name].as<std::string>() : std::string();
}

Result<UiOptions> ui_options_from(const po::variables_map& vm) {
  UiOptions o;
  if (!vm.count("port")) return fail("--port is required", ErrorCode::kInvalid);
  o.port = vm["port"].as<int>();
  if (o.port < 0 || o.port > 65535) {
    return fail("--port must be between 0 and 65535", ErrorCode::kInvalid);
  }
  if (!vm.count("celos")) return fail("--celos is required", ErrorCode::kInvalid);
  o.celos_url = vm["celos"].as<std::string>();
  if (!is_http_url(o.celos_url)) {
    return fail("--celos must be an http:// or https:// URL", ErrorCode::kInvalid);
  }
  o.hue_url = text_or(vm, "hue");
  if (vm.count("hue") && !is_http_url(o.hue_url)) {
    return fail("--hue must be an http:// or https:// URL", ErrorCode::kInvalid);
  }
  o.host = vm["host"].as<std::string>();
  o.config_path = text_or(vm, "config");
  o.token_file = text_or(vm, "celos-token-file");
  if (vm.count("allowed-hosts")) {
    o.allowed_hosts = vm["allowed-hosts"].as<std::string>();
    if (auto parsed = parse_allowed_hosts(*o.allowed_hosts); !parsed) {
      return fail("--allowed-hosts: " + parsed.error().message, ErrorCode::kInvalid);
    }
  }
  return o;
}

Result<std::string> read_flag_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot read " + path, ErrorCode::kInvalid);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Result<UiCommandLine> parse_ui_command_line(int argc, const char* const* argv,
                                            const std::string& version) {
  const po::options_description options = describe_ui_options();
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return fail(fmt::format("{} (see --help)", e.what()), ErrorCode::kInvalid);
  }
  UiCommandLine line;
  if (vm.count("help")) {
    std::ostringstream text;
    text << kUiUsage << options;
    line.print = text.str();
    return line;
  }
  if (vm.count("version")) {
    line.print = "celos-ui " + version + "\n";
    return line;
  }
  auto parsed = ui_options_from(vm);
  if (!parsed) return tl::unexpected(parsed.error());
  line.options = std::move(*parsed);
  return line;
}

Result<std::string> check_ui_files(const UiOptions& options) {
  if (!options.config_path.empty()) {
    auto text = read_flag_file(options.config_path);
    if (!text)
      return fail("cannot read the config file " + options.config_path, ErrorCode::kInvalid);
    auto config = parse_ui_config(*text);
    if (!config) {
      return fail(fmt::format("{} ({})", config.error().message, options.config_path),
                  ErrorCode::kInvalid);
    }
  }
  if (options.token_file.empty()) return std::string();
  auto text = read_flag_file(options.token_file);
  const std::string token = text ? text->substr(0, text->find('\n')) : std::string();
  if (token.empty()) {
    return fail("--celos-token-file " + options.token_file + ": cannot read a token from it",
                ErrorCode::kInvalid);
  }
  return token;
}

HostPolicy ui_host_policy(const UiOptions& options) {
  if (options.allowed_hosts) {
    auto parsed = parse_allowed_hosts(*options.allowed_hosts);
    if (parsed) return std::move(*parsed);
  }
  return default_host_policy(options.host, "");
}

}  // namespace celos
