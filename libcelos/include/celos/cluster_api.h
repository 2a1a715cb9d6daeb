// The cluster's HTTP side (SPEC §11, §16): GET /api/v1/cluster, POST /api/v1/cluster/step-down,
// and the forwarding of mutating requests from a standby to the leader.
#pragma once

#include <memory>

#include "celos/api.h"
#include "celos/cluster.h"
#include "celos/http_client.h"
#include "celos/route_table.h"

namespace celos {

// Registers /api/v1/cluster and /api/v1/cluster/step-down on `table`; `cluster` must outlive it.
void register_cluster_routes(RouteTable& table, Cluster& cluster);

// Wraps the server's handler: on a node that is not the leader, a mutating request is forwarded
// once to the leader (with X-Forwarded-For and X-Celos-Forwarded: <node id>) and answered with
// the leader's answer; with no leader known it is a 503 JSON error, and a forwarded request that
// reaches a node that is not the leader is a 503 (never forwarded again). Everything else goes
// to `inner`. Audit (SPEC §16): only the node that answers the client records a mutation: the
// standby that forwarded it (with the client's address and token name, and the status it
// relayed); the leader does not record a mutation forwarded by a node of its cluster.
AsyncHttpHandler make_cluster_http_handler(AsyncHttpHandler inner, const Api& api,
                                           Cluster& cluster, std::shared_ptr<HttpClient> http);

// The JSON of GET /api/v1/cluster.
std::string cluster_view_json(const ClusterView& view);

}  // namespace celos
