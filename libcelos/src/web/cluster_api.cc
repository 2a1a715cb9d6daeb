// GET /api/v1/cluster, POST /api/v1/cluster/step-down, and forwarding to the leader.
#include "celos/cluster_api.h"

#include <algorithm>
#include <atomic>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api_params.h"
#include "celos/api_serving.h"

namespace celos {
namespace json = boost::json;

namespace {

json::object node_json(const ClusterNodeInfo& n, bool with_last_seen) {
  json::object o{{"id", n.id}, {"url", n.url}, {"role", std::string(to_string(n.role))}};
  if (with_last_seen) o["lastSeen"] = format_time(n.last_seen);
  return o;
}

HttpServerResponse get_cluster(Cluster& cluster) {
  auto view = cluster.view();
  if (!view) return json_error(503, "cluster state unavailable: " + view.error().message);
  return HttpServerResponse{200, "application/json", cluster_view_json(*view), {}};
}

HttpServerResponse post_step_down(Cluster& cluster, const HttpServerRequest& request) {
  auto seconds = int_param(request, "seconds", 30, 0, 86400);
  if (!seconds) return error_response(seconds.error());
  auto until = cluster.step_down(std::chrono::seconds(*seconds));
  if (!until) {
    return json_error(until.error().code == ErrorCode::kInvalid ? 409 : 503, until.error().message);
  }
  return json_response(json::object{{"until", format_time(*until)}});
}

}  // namespace

std::string cluster_view_json(const ClusterView& view) {
  json::object o{{"name", view.name}, {"self", node_json(view.self, false)}};
  if (view.leader) {
    o["leader"] = json::object{{"id", view.leader->id},
                               {"url", view.leader->url},
                               {"epoch", view.leader->epoch},
                               {"since", format_time(view.leader->since)}};
  } else {
    o["leader"] = nullptr;
  }
  json::array nodes;
  for (const auto& n : view.nodes) nodes.push_back(node_json(n, true));
  o["nodes"] = std::move(nodes);
  return json::serialize(o);
}

void register_cluster_routes(RouteTable& table, Cluster& cluster) {
  table.add({.method = "GET",
             .path = "/cluster",
             .role = Role::kViewer,
             .mount = Mount::kV1,
             .summary = "The cluster: this node, the leader and the nodes seen lately",
             .response_schema = R"({"type":"object","properties":{"name":{"type":"string"},)"
                                R"("self":{"type":"object"},"leader":{"type":["object","null"]},)"
                                R"("nodes":{"type":"array","items":{"type":"object"}}}})",
             .handler = [&cluster](const HttpServerRequest&) { return get_cluster(cluster); }});
  table.add(
      {.method = "POST",
       .path = "/cluster/step-down",
       .role = Role::kAdmin,
       .mutates = true,
       .mount = Mount::kV1,
       .summary = "The leader gives up its lease and does not campaign for `seconds`",
       .params = {{.name = "seconds", .type = "integer", .description = "0-86400, default 30"}},
       .response_schema = R"({"type":"object","properties":{"until":{"type":"string"}}})",
       .handler = [&cluster](const HttpServerRequest& r) { return post_step_down(cluster, r); }});
}

namespace {

constexpr const char* kSecretHeader = "x-celos-cluster-secret";

HttpServerResponse forward(const HttpServerRequest& request, const ClusterLeaderInfo& leader,
                           const Cluster& cluster, const std::string& secret, HttpClient& http) {
  HttpRequest out;
  out.method = request.method;
  out.url = leader.url + request.target;
  out.body = request.body;
  for (const auto& [name, value] : request.headers) {
    if (name == "authorization" || name == "content-type" || name == "origin" ||
        name == "user-agent") {
      out.headers.emplace_back(name, value);
    }
  }
  auto fwd = request.headers.find("x-forwarded-for");
  const std::string client = request.remote.substr(0, request.remote.rfind(':'));
  out.headers.emplace_back("X-Forwarded-For",
                           fwd == request.headers.end() ? client : fwd->second + ", " + client);
  out.headers.emplace_back("X-Celos-Forwarded", cluster.node_id());
  out.headers.emplace_back("X-Celos-Cluster-Secret", secret);
  auto answer = http.send(out);
  if (!answer) {
    return unavailable(fmt::format("the leader {} at {} cannot be reached: {}", leader.id,
                                   leader.url, answer.error().message),
                       2);
  }
  HttpServerResponse response{answer->status, answer->header("Content-Type"), answer->body, {}};
  if (response.content_type.empty()) response.content_type = "application/json";
  if (auto retry = answer->header("Retry-After"); !retry.empty()) {
    response.headers["Retry-After"] = retry;
  }
  return response;
}

// Compares without stopping at the first difference (the time must not tell the secret).
bool same_secret(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

// True when the request carries the cluster's secret: another node forwarded it. Always false
// for a cluster of one (no secret: nobody forwards to it).
bool authentic_forward(const HttpServerRequest& request, const Cluster& cluster) {
  const auto secret = cluster.forward_secret();
  const auto sent = request.headers.find(kSecretHeader);
  return secret && !secret->empty() && sent != request.headers.end() &&
         same_secret(sent->second, *secret);
}

// The standby's side of a mutation: the lease's holder is looked up (which may ask the
// database) and the request sent to it. Runs on a pool thread, never on an HTTP thread.
HttpServerResponse forward_to_leader(const HttpServerRequest& request, Cluster& cluster,
                                     HttpClient& http, int retry_after) {
  const auto holder = cluster.lease_holder();
  if (!holder || holder->url.empty()) {
    return unavailable("the cluster has no leader right now", retry_after);
  }
  if (holder->id == cluster.node_id()) {
    return unavailable(
        fmt::format("the lease still names this node ({}) but it does not lead (a lease from "
                    "before a restart, or one it cannot renew): not forwarded to itself",
                    cluster.node_id()),
        retry_after);
  }
  const auto secret = cluster.forward_secret();
  if (!secret) {
    return unavailable(
        "cannot forward to the leader yet: the cluster's secret has not been "
        "read from the state database",
        retry_after);
  }
  return forward(request, *holder, cluster, *secret, http);
}

struct ForwardContext {
  const Api& api;
  Cluster& cluster;
  std::shared_ptr<HttpClient> http;
  ForwardingOptions options;
};

// Forwards on the pool with a deadline; the node answers the client, so it audits what the
// client got.
void forward_off_thread(const std::shared_ptr<const ForwardContext>& context,
                        HttpServerRequest request, HttpResponder respond) {
  const ForwardingOptions& options = context->options;
  respond = respond_once(std::move(respond));
  auto shared = std::make_shared<const HttpServerRequest>(std::move(request));
  auto answered = std::make_shared<std::atomic<bool>>(false);
  auto job = [context, shared, respond, answered] {
    HttpServerResponse answer = forward_to_leader(*shared, context->cluster, *context->http,
                                                  context->options.retry_after_seconds);
    const bool first = !answered->exchange(true);
    context->api.audit_answer(*shared, first ? answer.status : 503);
    if (first) respond(std::move(answer));
  };
  if (options.pool == nullptr) return job();
  if (!options.pool->post(job,
                          [respond] { respond(unavailable("the server is shutting down", 5)); })) {
    context->api.audit_answer(*shared, 503);
    return respond(unavailable("too many requests are being forwarded to the leader; try again",
                               options.retry_after_seconds));
  }
  if (options.timer == nullptr) return;
  options.timer->after(options.timeout, [options, respond, answered] {
    if (answered->exchange(true)) return;
    respond(unavailable(fmt::format("the leader did not answer the forwarded request within "
                                    "{} ms (it may still do it)",
                                    options.timeout.count()),
                        options.retry_after_seconds));
  });
}

}  // namespace

AsyncHttpHandler make_cluster_http_handler(AsyncHttpHandler inner, const Api& server_api,
                                           Cluster& node, std::shared_ptr<HttpClient> http,
                                           ForwardingOptions forwarding) {
  auto context = std::make_shared<const ForwardContext>(
      ForwardContext{server_api, node, std::move(http), forwarding});
  return [inner = std::move(inner), context](HttpServerRequest request, HttpResponder respond) {
    const Api& api = context->api;
    Cluster& cluster = context->cluster;
    if (!api.is_mutation(request)) return inner(std::move(request), std::move(respond));
    if (request.headers.count("x-celos-forwarded")) {
      // Only a node that knows the cluster's secret forwards (issue 33); anyone else naming a
      // node would skip the audit trail: refused and audited here.
      if (!authentic_forward(request, cluster)) {
        if (auto refused = api.refusal(request)) return respond(std::move(*refused));
        api.audit_answer(request, 403, /*refused=*/true);
        return respond(json_error(403,
                                  "X-Celos-Forwarded without the cluster's secret: only a "
                                  "node of this cluster forwards requests"));
      }
      // The node that forwarded it answers its client and audits (SPEC §16).
      if (!cluster.is_leader()) {
        return respond(
            unavailable("forwarded to a node that is not the cluster's leader "
                        "(leadership changed): try again",
                        context->options.retry_after_seconds));
      }
      request.audited_by_peer = true;
      return inner(std::move(request), std::move(respond));
    }
    if (cluster.is_leader()) return inner(std::move(request), std::move(respond));
    // The standby checks Host, Origin and the token itself before forwarding (SPEC §16).
    if (auto refused = api.refusal(request)) return respond(std::move(*refused));
    forward_off_thread(context, std::move(request), std::move(respond));
  };
}

}  // namespace celos
