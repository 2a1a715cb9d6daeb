#include "server/server_logging.h"

#include <iostream>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "celos/logging.h"
#include "celos/server.h"

namespace celos {

std::shared_ptr<spdlog::sinks::sink> setup_server_logging(const std::string& logs_dir) {
  auto file = make_daily_log_sink(logs_dir);
  auto console = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("celos", spdlog::sinks_init_list{file, console});
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return file;
}

void report_server_failure(std::string_view message) {
  if (spdlog::default_logger()->name() == "celos") {
    spdlog::critical("celos-server: {}", message);
  } else {
    std::cerr << "celos-server: " << message << "\n";
  }
}

}  // namespace celos
