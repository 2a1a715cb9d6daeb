// celos-ui's start-up and lifetime (celos/ui_options.h): what its main() does beyond parsing.
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "celos/auth.h"
#include "celos/http_client.h"
#include "celos/http_server.h"
#include "celos/ui_options.h"

namespace celos {
namespace {

void log_to_stderr(const std::string& name) {
  auto logger =
      std::make_shared<spdlog::logger>(name, std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  spdlog::set_default_logger(logger);
}

UiServerOptions handler_options(const UiOptions& options, const std::string& token) {
  HttpClientOptions client_options;
  client_options.connect_timeout = std::chrono::milliseconds(2000);
  client_options.total_timeout = std::chrono::milliseconds(20000);
  UiServerOptions ui;
  ui.celos_url = options.celos_url;
  ui.hue_url = options.hue_url;
  ui.config_path = options.config_path;
  ui.client = make_curl_http_client(client_options);
  if (!token.empty()) ui.client = with_bearer_token(ui.client, token);
  return ui;
}

}  // namespace

Result<void> run_ui_server(const UiOptions& options, const std::string& version) {
  auto token = check_ui_files(options);
  if (!token) return tl::unexpected(token.error());
  log_to_stderr("celos-ui");
  boost::asio::io_context signals_context;
  boost::asio::signal_set signals(signals_context, SIGTERM, SIGINT);

  HttpServerOptions server_options;
  server_options.host = options.host;
  server_options.port = static_cast<std::uint16_t>(options.port);
  server_options.threads = 4;  // each page waits on celos-server; let a few users in at once
  // The same Host/Origin checks as celos-server's (SPEC §16): a web page the user opens must not
  // rerun slots through the UI (cross-site requests, DNS rebinding).
  auto server = start_http_server(
      server_options,
      with_host_check(ui_host_policy(options), make_ui_handler(handler_options(options, *token))));
  spdlog::info("celos-ui {} on {}:{} reading {}", version, options.host, server->port(),
               options.celos_url);
  signals.async_wait([](const boost::system::error_code&, int signal) {
    spdlog::info("signal {} received: stopping", signal);
  });
  signals_context.run();
  server->stop();
  return {};
}

}  // namespace celos
