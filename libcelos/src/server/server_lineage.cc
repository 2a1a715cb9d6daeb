#include "server/server_lineage.h"

#include <cctype>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "server/server_cluster.h"

namespace celos {
namespace {

Result<std::string> read_token(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return fail(fmt::format("--openlineage-token-file: cannot read {}", path), ErrorCode::kInvalid);
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty()) {
    return fail(fmt::format("--openlineage-token-file: {} is empty", path), ErrorCode::kInvalid);
  }
  return token;
}

Result<std::unique_ptr<LineageTransport>> transport_of(const ServerOptions& opts) {
  if (!opts.openlineage_file.empty()) {
    return make_file_lineage_transport(make_local_file_system(), opts.openlineage_file);
  }
  std::string token;
  if (!opts.openlineage_token_file.empty()) {
    auto read = read_token(opts.openlineage_token_file);
    if (!read) return tl::unexpected(read.error());
    token = std::move(*read);
  }
  auto http = make_curl_http_client(
      {.connect_timeout = std::chrono::seconds(5), .total_timeout = std::chrono::seconds(10)});
  return make_http_lineage_transport(std::move(http), opts.openlineage_url, std::move(token));
}

void render(std::string& out, const ServerLineage::Counters& c, const LineageSpool& spool) {
  fmt::format_to(std::back_inserter(out),
                 "# HELP celos_openlineage_events_sent_total OpenLineage events the collector "
                 "accepted.\n# TYPE celos_openlineage_events_sent_total counter\n"
                 "celos_openlineage_events_sent_total {}\n"
                 "# HELP celos_openlineage_events_dropped_total OpenLineage events given up: "
                 "rejected by the collector, or dropped from a full spool.\n"
                 "# TYPE celos_openlineage_events_dropped_total counter\n"
                 "celos_openlineage_events_dropped_total{{reason=\"rejected\"}} {}\n"
                 "celos_openlineage_events_dropped_total{{reason=\"spool_full\"}} {}\n"
                 "# HELP celos_openlineage_spool_events OpenLineage events waiting to be sent.\n"
                 "# TYPE celos_openlineage_spool_events gauge\n"
                 "celos_openlineage_spool_events {}\n",
                 c.sent.load(), c.rejected.load(), c.spool_full.load(), spool.size());
}

}  // namespace

Result<std::unique_ptr<ServerLineage>> ServerLineage::open(const ServerOptions& opts, Backends& b,
                                                           Scheduling& s, Cluster& cluster) {
  if (!opts.lineage_enabled()) return nullptr;
  auto transport = transport_of(opts);
  if (!transport) return tl::unexpected(transport.error());
  std::unique_ptr<ServerLineage> lineage(new ServerLineage());
  auto counters = lineage->counters_;
  LineageOptions options;
  options.job_namespace =
      opts.openlineage_namespace.empty() ? opts.cluster_name : opts.openlineage_namespace;
  options.default_fs = b.default_fs_uri;
  options.host = machine_name("localhost");
  auto spool = LineageSpool::open(
      {make_local_file_system(), opts.db_dir + "/lineage", 100'000,
       [counters] { counters->spool_full.fetch_add(1); }},
      *b.db, [&s] { return s.scheduler.config(); }, options);
  if (!spool) return tl::unexpected(spool.error());
  lineage->spool_ = std::move(*spool);
  s.scheduler.set_outbox(*lineage->spool_);
  spdlog::info("OpenLineage: run events of namespace {} go to {}", options.job_namespace,
               (*transport)->describe());
  LineageSenderOptions sender;
  sender.may_send = [&cluster] { return cluster.is_leader(); };  // only the leader sends
  sender.on_sent = [counters] { counters->sent.fetch_add(1); };
  sender.on_rejected = [counters] { counters->rejected.fetch_add(1); };
  lineage->sender_ =
      std::make_unique<LineageSender>(*lineage->spool_, std::move(*transport), std::move(sender));
  LineageSender* wake = lineage->sender_.get();
  lineage->spool_->set_on_pending([wake] { wake->wake(); });
  std::shared_ptr<LineageSpool> held = lineage->spool_;
  s.metrics.add_source([counters, held](std::string& out) { render(out, *counters, *held); });
  return lineage;
}

ServerLineage::~ServerLineage() { stop(); }

void ServerLineage::stop() {
  if (sender_) sender_->stop();
}

}  // namespace celos
