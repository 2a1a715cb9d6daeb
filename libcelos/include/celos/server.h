// celos-server's start-up and lifetime (libcelos/src/server/): what its main() does beyond
// parsing the command line (celos/server_options.h). Exit codes (SPEC §8): 0 done, 1 failed,
// 2 refused (bad configuration or input).
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "celos/error.h"
#include "celos/server_options.h"

namespace celos {

// Runs celos-server (server_run.cc): checks the directories, sets up logging (a daily file in
// --logs and standard error, UTC), opens the state database, loads the workflows, serves the API
// with the cluster's forwarding, steps, and on SIGTERM or SIGINT lets the running step finish and
// stops (a leader hands its lease over at once). SIGHUP reopens the log files and re-reads the
// tokens file. Errors are start-up errors: kInvalid a refused configuration (exit 2), others
// exit 1 (report_server_failure).
[[nodiscard]] Result<void> run_server(const ServerOptions& options, const std::string& version);

// --import-db DIR (server_import.cc): copies the file database DIR into --state-db, prints what
// it copied to `out` and returns 0; 1 when it failed or a file is corrupt, 2 when it was refused
// (no such directory, a non-empty target without --force, bad credentials), the reason on
// `err`. Nothing is written unless everything is.
int import_db(const ServerOptions& options, std::ostream& out, std::ostream& err);

// "celos-server: <message>" on standard error, and in the log once logging is set up (its
// console sink is standard error).
void report_server_failure(std::string_view message);

}  // namespace celos
