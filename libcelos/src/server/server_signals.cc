#include "server/server_signals.h"

#include <spdlog/spdlog.h>

namespace celos {

ServerSignals::ServerSignals() = default;

void ServerSignals::on_hangup() {
  hangups_.async_wait([this](const boost::system::error_code& error, int) {
    if (error) return;  // cancelled at shutdown
    spdlog::info("SIGHUP received: reloading");
    hooks_.run();
    on_hangup();
  });
}

void ServerSignals::wait() {
  on_hangup();
  stops_.async_wait([this](const boost::system::error_code&, int signal) {
    spdlog::info("signal {} received: finishing the running step and stopping", signal);
    hangups_.cancel();
  });
  context_.run();
}

}  // namespace celos
