// --import-db (celos/server.h): copy a file database into --state-db and exit.
#include <chrono>
#include <ostream>

#include "celos/clock.h"
#include "celos/server.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"

namespace celos {

int import_db(const ServerOptions& opts, std::ostream& out, std::ostream& err) {
  const Time now = system_clock().now();
  auto report = import_file_database(opts.import_db_dir, opts.state_db, opts.force, now);
  if (!report) {
    err << "celos-server: import of " << opts.import_db_dir
        << " failed, nothing written: " << report.error().message << "\n";
    return report.error().code == ErrorCode::kInvalid ? 2 : 1;
  }
  out << "imported " << opts.import_db_dir << " into " << describe_postgres_uri(opts.state_db)
      << ": " << report->slots << " slots, " << report->reruns << " rerun markers, "
      << report->paused << " pause flags, " << report->backfills << " backfill plans, "
      << report->history << " history entries\n";
  return 0;
}

}  // namespace celos
