// Which cluster celos-server joins (SPEC §11, §16): a PostgreSQL --state-db makes it a node of
// the lease cluster, anything else a cluster of one.
#pragma once

#include <memory>
#include <string>

#include "celos/cluster.h"
#include "celos/server_options.h"
#include "celos/write_fence.h"

namespace celos {

struct ClusterChoice {
  ClusterOptions options;     // name, node id, advertised URL (no trailing '/'), lease
  bool shared = false;        // the PostgreSQL lease cluster, else a cluster of one
  bool loopback_url = false;  // the advertised URL is a loopback address: other hosts cannot
                              // forward to it
};

// The choice from the options, with `host_name` this machine's name: --node-id, else
// <host name>:<port>; --advertise-url, else http://<--host>:<port>, where a wildcard --host
// (0.0.0.0, ::) advertises the host name.
ClusterChoice choose_cluster(const ServerOptions& opts, const std::string& host_name);

// This machine's name; `fallback` when it has none.
std::string machine_name(const std::string& fallback);

// The chosen cluster, logged (a loopback URL of a shared cluster is warned about). `fence` is
// what the PostgreSQL cluster keeps set to its lease while it leads.
std::unique_ptr<Cluster> make_server_cluster(const ServerOptions& opts,
                                             std::shared_ptr<WriteFence> fence);

}  // namespace celos
