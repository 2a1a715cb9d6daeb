// The server's log file: `<directory>/celos.log`, rolled over at UTC midnight.
//
// Today's lines are always in celos.log (so `tail -f celos.log` keeps working across days); at
// the first line of a new UTC day the file is renamed to `celos.log.<yyyy-mm-dd>` (the day it
// holds) and a new celos.log is started. A celos.log left from an earlier day (the server was
// down at midnight) is rolled when the sink opens. Only the newest `keep_days` rolled files are
// kept. Thread-safe (spdlog's mutex sink).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <spdlog/sinks/sink.h>

#include "celos/time.h"

namespace celos {

// `clock` is for tests; by default the system clock. Throws spdlog::spdlog_ex if the file
// cannot be opened (a start-up failure).
std::shared_ptr<spdlog::sinks::sink> make_daily_log_sink(std::string directory, int keep_days = 30,
                                                         std::function<Time()> clock = {});

// Closes and reopens celos.log of a sink made by make_daily_log_sink (SIGHUP: after the file
// was moved away, lines go to a new celos.log). False for any other sink. Throws
// spdlog::spdlog_ex if the file cannot be opened.
bool reopen_daily_log_sink(spdlog::sinks::sink& sink);

}  // namespace celos
