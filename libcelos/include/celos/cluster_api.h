// The cluster's HTTP side (SPEC §11, §16): GET /api/v1/cluster, POST /api/v1/cluster/step-down,
// and the forwarding of mutating requests from a standby to the leader.
#pragma once

#include <chrono>
#include <memory>

#include "celos/api.h"
#include "celos/cluster.h"
#include "celos/http_client.h"
#include "celos/request_pool.h"
#include "celos/route_table.h"

namespace celos {

// Registers /api/v1/cluster and /api/v1/cluster/step-down on `table`; `cluster` must outlive it.
void register_cluster_routes(RouteTable& table, Cluster& cluster);

// Where a standby forwards (issue 33): off the HTTP threads, with a deadline.
struct ForwardingOptions {
  RequestPool* pool = nullptr;     // null: on the calling thread (unit tests)
  DeadlineTimer* timer = nullptr;  // null: no deadline but the HTTP client's own
  std::chrono::milliseconds timeout{30000};
  int retry_after_seconds = 2;  // the Retry-After of the 503s
};

// Wraps the server's handler: on a node that is not the leader, a mutating request is forwarded
// once to the lease's holder (with X-Forwarded-For, X-Celos-Forwarded: <node id> and
// X-Celos-Cluster-Secret: the cluster's secret, Cluster::forward_secret) and answered with the
// leader's answer. A 503 with Retry-After, at once, when no node holds the lease, when the lease
// names this node (never forwarded to itself), or when the secret is not known yet; a 503 after
// `timeout` when the leader does not answer. A request with X-Celos-Forwarded but without the
// secret is forged: 403, audited. An authentic forwarded request that reaches a node that is
// not the leader is a 503 (never forwarded again). Everything else goes to `inner`. Audit
// (SPEC §16): only the node that answers the client records a mutation: the standby that
// forwarded it (with the client's address and token name, and the status it answered); the
// leader does not record an authentic forwarded mutation.
AsyncHttpHandler make_cluster_http_handler(AsyncHttpHandler inner, const Api& api, Cluster& cluster,
                                           std::shared_ptr<HttpClient> http,
                                           ForwardingOptions forwarding = {});

// The JSON of GET /api/v1/cluster.
std::string cluster_view_json(const ClusterView& view);

}  // namespace celos
