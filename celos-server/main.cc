// celos-server: parses the command line (SPEC §8), wires libcelos together and serves the HTTP
// API (SPEC §6) until SIGTERM/SIGINT. Everything with behaviour lives in libcelos.
// GCC 12's -Wnull-dereference fires inside Boost.Asio's headers (see libcelos/src/web).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#if defined(__GNUC__) && !defined(__clang__)
// Asio uses std::atomic_thread_fence, which GCC's -fsanitize=thread warns about (tsan preset).
#pragma GCC diagnostic ignored "-Wtsan"
#endif

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/program_options.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "celos/api.h"
#include "celos/hadoop.h"
#include "celos/logging.h"
#include "celos/http_client.h"
#include "celos/http_server.h"
#include "celos/scheduler.h"
#include "celos/slot_history.h"
#include "celos/state_db.h"
#include "celos/version.h"
#include "celos/workflow_loader.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

struct StartupError {
  std::string message;
};

// A directory that must exist (workflows, defaults, an explicit --hadoop-conf).
void require_dir(const std::string& what, const std::string& path) {
  if (!fs::is_directory(path)) throw StartupError{what + " directory " + path + " does not exist"};
}

// db and logs are created when missing, but only one level deep: a missing parent is more
// likely a typo than a wish.
void ensure_dir(const std::string& what, const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return;
  fs::create_directory(path, ec);
  if (ec) throw StartupError{"cannot create " + what + " directory " + path + ": " + ec.message()};
}

void setup_logging(const std::string& logs_dir) {
  auto file = celos::make_daily_log_sink(logs_dir);
  auto console = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("celos", spdlog::sinks_init_list{file, console});
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char** argv) try {
  int port = -1, auto_schedule = 0;
  std::string host, workflows, defaults, logs, db, hadoop_conf;
  po::options_description options("celos-server options");
  options.add_options()
      ("help", "print this help and exit")
      ("version", "print the version and exit")
      ("port", po::value(&port), "HTTP port (required; 0 = any free port)")
      ("host", po::value(&host)->default_value("127.0.0.1"), "address to listen on")
      ("workflows", po::value(&workflows)->default_value("/etc/celos/workflows"), "workflows directory")
      ("defaults", po::value(&defaults)->default_value("/etc/celos/defaults"), "defaults directory")
      ("logs", po::value(&logs)->default_value("/var/log/celos"), "logs directory (created if missing)")
      ("db", po::value(&db)->default_value("/var/lib/celos/db"), "state database directory (created if missing)")
      ("autoSchedule", po::value(&auto_schedule), "seconds between automatic scheduler steps")
      ("hadoop-conf", po::value(&hadoop_conf)->default_value("/etc/hadoop/conf"),
       "Hadoop configuration directory (core-site.xml, hdfs-site.xml)");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, options), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << "Usage: celos-server --port N [options]\n" << options;
    return 0;
  }
  if (vm.count("version")) {
    std::cout << "celos-server " << CELOS_VERSION << "\n";
    return 0;
  }
  if (!vm.count("port")) throw StartupError{"--port is required"};
  if (port < 0 || port > 65535) throw StartupError{"--port must be between 0 and 65535"};
  if (vm.count("autoSchedule") && auto_schedule <= 0) {
    throw StartupError{"--autoSchedule must be a positive number of seconds"};
  }
  require_dir("workflows", workflows);
  require_dir("defaults", defaults);
  if (!vm["hadoop-conf"].defaulted()) require_dir("Hadoop configuration", hadoop_conf);
  ensure_dir("db", db);
  ensure_dir("logs", logs);
  setup_logging(logs);
  // Before anything slow, so that an early SIGTERM is a clean stop too.
  boost::asio::io_context signals_context;
  boost::asio::signal_set signals(signals_context, SIGTERM, SIGINT);

  const char* user_env = std::getenv("HADOOP_USER_NAME");
  const std::string user = user_env ? user_env : "";
  celos::Result<celos::HadoopConfig> hadoop_config = celos::HadoopConfig{};
  if (fs::is_directory(hadoop_conf)) hadoop_config = celos::read_hadoop_config_dir(hadoop_conf);
  if (!hadoop_config) throw StartupError{hadoop_config.error().message};
  auto http = celos::make_curl_http_client();
  auto state_db = celos::make_file_state_database(celos::make_local_file_system(), db);
  auto file_systems = celos::make_hadoop_file_system_resolver(*hadoop_config, http, user);
  auto source = celos::make_js_workflow_source(
      {.workflows_dir = workflows, .defaults_dir = defaults, .db_dir = db, .http = http,
       .oozie_user = user});
  celos::Scheduler scheduler(*source, *state_db, *file_systems);
  auto history = celos::make_history_recorder(*state_db);
  scheduler.add_listener(*history);
  // Load once before serving, so that reads never trigger the first load themselves.
  const auto config = scheduler.reload();
  spdlog::info("celos-server {}: {} workflows loaded from {} ({} load errors)", CELOS_VERSION,
               config->workflows.size(), workflows, config->errors.size());

  celos::Api api(scheduler, {.clock = {}, .jobs_dir = db + "/jobs"});
  celos::SerialWorker worker;
  celos::HttpServerOptions server_options;
  server_options.host = host;
  server_options.port = static_cast<std::uint16_t>(port);
  auto server = celos::start_async_http_server(server_options, celos::make_api_http_handler(api, worker));
  spdlog::info("listening on {}:{}", host, server->port());
  std::optional<celos::PeriodicStepper> stepper;
  if (auto_schedule > 0) {
    stepper.emplace(api, worker, std::chrono::seconds(auto_schedule));
    spdlog::info("stepping automatically every {} s", auto_schedule);
  }

  signals.async_wait([](const boost::system::error_code&, int signal) {
    spdlog::info("signal {} received: finishing the running step and stopping", signal);
  });
  signals_context.run();

  // A running step finishes; queued mutations are answered 503; then connections close.
  if (stepper) stepper->stop();
  worker.stop();
  server->stop();
  spdlog::info("celos-server stopped");
  return 0;
} catch (const StartupError& e) {
  std::cerr << "celos-server: " << e.message << "\n";
  return 2;
} catch (const po::error& e) {
  std::cerr << "celos-server: " << e.what() << " (see --help)\n";
  return 2;
} catch (const std::exception& e) {
  // Once logging is set up, the log has it too (its console sink is stderr).
  if (spdlog::default_logger()->name() == "celos") {
    spdlog::critical("celos-server: {}", e.what());
  } else {
    std::cerr << "celos-server: " << e.what() << "\n";
  }
  return 1;
}
