// OpenLineage in celos-server (issue 32, celos/lineage.h): the spool at <db>/lineage as the
// scheduler's outbox, and the sender to --openlineage-url or --openlineage-file. Only the
// cluster's leader sends; its metrics are celos_openlineage_*.
#pragma once

#include <atomic>
#include <memory>

#include "celos/cluster.h"
#include "celos/lineage.h"
#include "celos/server_options.h"
#include "server/server_parts.h"

namespace celos {

class ServerLineage {
 public:
  // Nothing without --openlineage-url or --openlineage-file. kInvalid: the token file cannot be
  // read (exit 2); other errors: the spool cannot be opened (exit 1). Sets the scheduler's
  // outbox: call before the first step.
  [[nodiscard]] static Result<std::unique_ptr<ServerLineage>> open(const ServerOptions& opts,
                                                                   Backends& b, Scheduling& s,
                                                                   Cluster& cluster);
  ~ServerLineage();
  // Stops the sender; what is unsent stays in the spool for the next start.
  void stop();

  struct Counters {
    std::atomic<std::uint64_t> sent{0}, rejected{0}, spool_full{0};
  };

 private:
  ServerLineage() = default;
  std::shared_ptr<Counters> counters_ = std::make_shared<Counters>();
  std::shared_ptr<LineageSpool> spool_;
  std::unique_ptr<LineageSender> sender_;
};

}  // namespace celos
