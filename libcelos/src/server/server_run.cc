// celos-server's start-up sequence and lifetime (celos/server.h): the parts of server_parts.h
// in order, the port opened before the workflows load, and the orderly stop.
#include <spdlog/spdlog.h>

#include "celos/api_serving.h"
#include "celos/http_server.h"
#include "celos/logging.h"
#include "celos/server.h"
#include "server/server_lineage.h"
#include "server/server_logging.h"
#include "server/server_parts.h"
#include "server/server_signals.h"

namespace celos {
namespace {

std::unique_ptr<HttpServer> start_serving(const ServerOptions& opts, Front& f) {
  HttpServerOptions server_options;
  server_options.host = opts.host;
  server_options.port = static_cast<std::uint16_t>(opts.port);
  ServingOptions serving = f.serving.reading();
  serving.grouped = &f.announcements;
  return start_async_http_server(
      server_options, make_cluster_http_handler(make_api_http_handler(f.api, f.worker, serving),
                                                f.api, *f.cluster, f.serving.forward_client,
                                                f.serving.forwarding(opts.lease_seconds)));
}

// Serves until SIGTERM or SIGINT, then stops: a running step finishes; queued mutations are
// answered 503; then connections close and a leader hands its lease over at once.
void serve(const ServerOptions& opts, const std::string& version, Backends& b, Scheduling& s,
           Front& f, TokenStore* tokens, ServerSignals& signals, ServerLineage* lineage) {
  auto server = start_serving(opts, f);
  spdlog::info("listening on {}:{}", opts.host, server->port());
  s.own_port = server->port();
  // The port is open first: /health/*, /metrics and /version answer while the files load,
  // everything else waits for the load (SPEC §16).
  const auto config = s.scheduler.reload();
  f.startup.open();
  spdlog::info("celos-server {}: {} workflows loaded from {} ({} load errors)", version,
               config->workflows.size(), opts.workflows_dir, config->errors.size());
  Background background(opts, b, s, f);
  // SIGHUP also re-reads the tokens file (SPEC §16); serving and the running step go on.
  if (tokens) signals.reload_hooks().add("tokens file", [tokens] { return tokens->reload(); });
  signals.wait();

  background.stop();
  if (s.file_events) s.file_events->set_on_event({});  // the inotify thread outlives `f`
  if (f.events) f.events->stop();
  f.worker.stop();
  f.announcements.stop();
  if (lineage) lineage->stop();  // it asks the cluster whether it leads
  server->stop();
  f.serving.stop();
  f.cluster.reset();  // a leader hands its lease over at once
  spdlog::info("celos-server stopped");
}

}  // namespace

Result<void> run_server(const ServerOptions& opts, const std::string& version) {
  if (auto ok = prepare_server_directories(opts); !ok) {
    return fail(ok.error().message, ErrorCode::kInvalid);
  }
  const auto log_file = setup_server_logging(opts.logs_dir);
  // Before anything slow, so that an early SIGTERM is a clean stop too.
  ServerSignals signals;
  signals.reload_hooks().add("log files", [&log_file]() -> Result<void> {
    reopen_daily_log_sink(*log_file);
    return {};
  });
  auto backends = open_backends(opts);
  if (!backends) return tl::unexpected(backends.error());
  Scheduling scheduling(opts, *backends);
  auto tokens = open_tokens(opts);
  if (!tokens) return tl::unexpected(tokens.error());
  Front front(opts, *backends, scheduling, tokens->get());
  auto lineage = ServerLineage::open(opts, *backends, scheduling, *front.cluster);
  if (!lineage) return tl::unexpected(lineage.error());
  serve(opts, version, *backends, scheduling, front, tokens->get(), signals, lineage->get());
  return {};
}

}  // namespace celos
