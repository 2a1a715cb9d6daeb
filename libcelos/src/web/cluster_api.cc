// GET /api/v1/cluster, POST /api/v1/cluster/step-down, and forwarding to the leader.
#include "celos/cluster_api.h"

#include <algorithm>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api_params.h"

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
  table.add({.method = "GET", .path = "/cluster", .role = Role::kViewer, .mount = Mount::kV1,
             .summary = "The cluster: this node, the leader and the nodes seen lately",
             .response_schema =
                 R"({"type":"object","properties":{"name":{"type":"string"},)"
                 R"("self":{"type":"object"},"leader":{"type":["object","null"]},)"
                 R"("nodes":{"type":"array","items":{"type":"object"}}}})",
             .handler = [&cluster](const HttpServerRequest&) { return get_cluster(cluster); }});
  table.add({.method = "POST", .path = "/cluster/step-down", .role = Role::kAdmin,
             .mutates = true, .mount = Mount::kV1,
             .summary = "The leader gives up its lease and does not campaign for `seconds`",
             .params = {{.name = "seconds", .type = "integer",
                         .description = "0-86400, default 30"}},
             .response_schema = R"({"type":"object","properties":{"until":{"type":"string"}}})",
             .handler = [&cluster](const HttpServerRequest& r) {
               return post_step_down(cluster, r);
             }});
}

namespace {

HttpServerResponse forward(const HttpServerRequest& request, const std::string& leader,
                           const Cluster& cluster, HttpClient& http) {
  HttpRequest out;
  out.method = request.method;
  out.url = leader + request.target;
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
  auto answer = http.send(out);
  if (!answer) {
    return json_error(503, fmt::format("the leader at {} cannot be reached: {}", leader,
                                       answer.error().message));
  }
  HttpServerResponse response{answer->status, answer->header("Content-Type"), answer->body, {}};
  if (response.content_type.empty()) response.content_type = "application/json";
  return response;
}

// True when X-Celos-Forwarded names another node of this cluster: then that node answers the
// client and writes the audit record. A name the cluster does not know (or a view that cannot
// be read) leaves the record to this node: better twice than never.
bool forwarded_by_peer(const HttpServerRequest& request, Cluster& cluster) {
  auto header = request.headers.find("x-celos-forwarded");
  if (header == request.headers.end() || header->second == cluster.node_id()) return false;
  auto view = cluster.view();
  if (!view) return false;
  return std::any_of(view->nodes.begin(), view->nodes.end(),
                     [&](const ClusterNodeInfo& n) { return n.id == header->second; });
}

}  // namespace

AsyncHttpHandler make_cluster_http_handler(AsyncHttpHandler inner, const Api& api,
                                           Cluster& cluster, std::shared_ptr<HttpClient> http) {
  return [inner = std::move(inner), &api, &cluster, http](HttpServerRequest request,
                                                          HttpResponder respond) {
    if (!api.is_mutation(request)) return inner(std::move(request), std::move(respond));
    if (cluster.is_leader()) {
      request.audited_by_peer = forwarded_by_peer(request, cluster);
      return inner(std::move(request), std::move(respond));
    }
    // A request another node forwarded: that node answers its client and audits (SPEC §16).
    if (request.headers.count("x-celos-forwarded")) {
      return respond(json_error(503, "forwarded to a node that is not the cluster's leader "
                                     "(leadership changed): try again"));
    }
    // The standby checks Host, Origin and the token itself before forwarding (SPEC §16).
    if (auto refused = api.refusal(request)) return respond(std::move(*refused));
    const auto leader = cluster.leader_url();
    HttpServerResponse answer = leader ? forward(request, *leader, cluster, *http)
                                       : json_error(503, "the cluster has no leader right now");
    api.audit_answer(request, answer.status);  // this node answers the client
    respond(std::move(answer));
  };
}

}  // namespace celos
