// celos-ui: parses the command line (SPEC §8), checks the config file once so that a typo is a
// start-up error, and serves the grid (SPEC §9) until SIGTERM/SIGINT. Behaviour lives in
// libcelos (celos/ui.h).
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/program_options.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "celos/http_client.h"
#include "celos/auth.h"
#include "celos/host_check.h"
#include "celos/http_server.h"
#include "celos/ui.h"
#include "celos/version.h"

namespace po = boost::program_options;

namespace {

struct StartupError {
  std::string message;
};

bool is_http_url(const std::string& url) {
  return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
}

void check_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StartupError{"cannot read the config file " + path};
  std::stringstream text;
  text << in.rdbuf();
  auto config = celos::parse_ui_config(text.str());
  if (!config) throw StartupError{config.error().message + " (" + path + ")"};
}

void setup_logging() {
  auto logger = std::make_shared<spdlog::logger>(
      "celos-ui", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char** argv) try {
  int port = -1;
  std::string host, celos_url, hue_url, config_path, token_file, allowed_hosts;
  po::options_description options("celos-ui options");
  options.add_options()
      ("help", "print this help and exit")
      ("version", "print the version and exit")
      ("port", po::value(&port), "HTTP port of the UI (required; 0 = any free port)")
      ("celos", po::value(&celos_url), "URL of celos-server, e.g. http://127.0.0.1:8080 (required)")
      ("hue", po::value(&hue_url), "URL of Hue; slots with an external id link to <hue>/list_oozie_workflow/<id>")
      ("config", po::value(&config_path), "JSON file grouping workflows: {\"groups\": [{\"name\", \"workflows\": []}]}; re-read when it changes")
      ("host", po::value(&host)->default_value("127.0.0.1"), "address to listen on (0.0.0.0 for all)")
      ("allowed-hosts", po::value(&allowed_hosts),
       "Host names this UI answers to, comma-separated ('*' = any; default: localhost, "
       "127.0.0.1, ::1, --host and the machine's name); POSTs from pages of other hosts are refused")
      ("celos-token-file", po::value(&token_file), "file holding the bearer token sent to celos-server on every request (whoever reaches the UI acts with its role)");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, options), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << "Usage: celos-ui --port N --celos URL [--hue URL] [--config FILE] [--host ADDR]\n"
              << "Serves the workflow grid at /ui?time=<ISO UTC>&zoom=<minutes>"
                 "[&filter=<id part>][&refresh=<seconds>];\n"
              << "a click on a slot opens its details (/slot), with a range rerun preview.\n\n"
              << options;
    return 0;
  }
  if (vm.count("version")) {
    std::cout << "celos-ui " << CELOS_VERSION << "\n";
    return 0;
  }
  if (!vm.count("port")) throw StartupError{"--port is required"};
  if (port < 0 || port > 65535) throw StartupError{"--port must be between 0 and 65535"};
  if (!vm.count("celos")) throw StartupError{"--celos is required"};
  if (!is_http_url(celos_url)) throw StartupError{"--celos must be an http:// or https:// URL"};
  if (vm.count("hue") && !is_http_url(hue_url)) {
    throw StartupError{"--hue must be an http:// or https:// URL"};
  }
  if (vm.count("config")) check_config(config_path);
  setup_logging();
  boost::asio::io_context signals_context;
  boost::asio::signal_set signals(signals_context, SIGTERM, SIGINT);

  celos::HttpClientOptions client_options;
  client_options.connect_timeout = std::chrono::milliseconds(2000);
  client_options.total_timeout = std::chrono::milliseconds(20000);
  celos::UiServerOptions ui;
  ui.celos_url = celos_url;
  ui.hue_url = hue_url;
  ui.config_path = config_path;
  ui.client = celos::make_curl_http_client(client_options);
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    std::string token;
    if (!in || !std::getline(in, token) || token.empty()) {
      throw StartupError{"--celos-token-file " + token_file + ": cannot read a token from it"};
    }
    ui.client = celos::with_bearer_token(ui.client, token);
  }

  celos::HttpServerOptions server_options;
  server_options.host = host;
  server_options.port = static_cast<std::uint16_t>(port);
  server_options.threads = 4;  // each page waits on celos-server; let a few users in at once
  // The same Host/Origin checks as celos-server's (SPEC §16): a web page the user opens must not
  // rerun slots through the UI (cross-site requests, DNS rebinding).
  celos::HostPolicy hosts = celos::default_host_policy(host, "");
  if (vm.count("allowed-hosts")) {
    auto parsed = celos::parse_allowed_hosts(allowed_hosts);
    if (!parsed) throw StartupError{"--allowed-hosts: " + parsed.error().message};
    hosts = std::move(*parsed);
  }
  auto server = celos::start_http_server(
      server_options, celos::with_host_check(std::move(hosts), celos::make_ui_handler(ui)));
  spdlog::info("celos-ui {} on {}:{} reading {}", CELOS_VERSION, host, server->port(), celos_url);

  signals.async_wait([](const boost::system::error_code&, int signal) {
    spdlog::info("signal {} received: stopping", signal);
  });
  signals_context.run();
  server->stop();
  return 0;
} catch (const StartupError& e) {
  std::cerr << "celos-ui: " << e.message << "\n";
  return 2;
} catch (const po::error& e) {
  std::cerr << "celos-ui: " << e.what() << " (see --help)\n";
  return 2;
} catch (const std::exception& e) {
  std::cerr << "celos-ui: " << e.what() << "\n";
  return 1;
}
