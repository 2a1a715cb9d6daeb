#include "server/server_cluster.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "celos/write_fence.h"

namespace celos {

ClusterChoice choose_cluster(const ServerOptions& opts, const std::string& host_name) {
  const bool wildcard = opts.host == "0.0.0.0" || opts.host == "::" || opts.host == "[::]";
  ClusterChoice choice;
  ClusterOptions& cluster = choice.options;
  cluster.name = opts.cluster_name;
  cluster.node_id =
      opts.node_id.empty() ? fmt::format("{}:{}", host_name, opts.port) : opts.node_id;
  cluster.url = !opts.advertise_url.empty()
                    ? opts.advertise_url
                    : fmt::format("http://{}:{}", wildcard ? host_name : opts.host, opts.port);
  while (cluster.url.size() > 1 && cluster.url.back() == '/') cluster.url.pop_back();
  cluster.lease = std::chrono::seconds(opts.lease_seconds);
  choice.shared = opts.uses_postgres();
  choice.loopback_url = cluster.url.find("://127.") != std::string::npos ||
                        cluster.url.find("://localhost") != std::string::npos ||
                        cluster.url.find("://[::1]") != std::string::npos;
  return choice;
}

std::string machine_name(const std::string& fallback) {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return fallback;
  return name;
}

std::unique_ptr<Cluster> make_server_cluster(const ServerOptions& opts,
                                             std::shared_ptr<WriteFence> fence) {
  ClusterChoice choice = choose_cluster(opts, machine_name(""));
  ClusterOptions& cluster = choice.options;
  if (!choice.shared) return make_single_node_cluster(std::move(cluster));
  if (choice.loopback_url) {
    spdlog::warn(
        "advertised URL {} is a loopback address: other cluster nodes on other hosts "
        "cannot forward to this one (set --advertise-url)",
        cluster.url);
  }
  spdlog::info("cluster {}: node {} at {}, lease {} s", cluster.name, cluster.node_id, cluster.url,
               opts.lease_seconds);
  return make_postgres_cluster(opts.state_db, std::move(cluster), std::move(fence));
}

}  // namespace celos
