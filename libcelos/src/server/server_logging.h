// celos-server's log (SPEC §16): a daily file in --logs and standard error, UTC timestamps.
#pragma once

#include <memory>
#include <string>

#include <spdlog/sinks/sink.h>

namespace celos {

// Makes the logger "celos" the default one; returns its file sink, for SIGHUP's reopen
// (reopen_daily_log_sink).
std::shared_ptr<spdlog::sinks::sink> setup_server_logging(const std::string& logs_dir);

}  // namespace celos
