// celos-server's signals (SPEC §16): SIGTERM and SIGINT stop, SIGHUP reloads.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "celos/reload.h"

namespace celos {

// Caught from construction on, so that an early SIGTERM is a clean stop too and an early SIGHUP
// does not kill the server (it waits until wait() runs the hooks).
class ServerSignals {
 public:
  ServerSignals();
  ServerSignals(const ServerSignals&) = delete;
  ServerSignals& operator=(const ServerSignals&) = delete;

  // What a SIGHUP re-reads: add a hook before wait().
  ReloadHooks& reload_hooks() { return hooks_; }

  // Runs the reload hooks on each SIGHUP (serving and the running step go on) until SIGTERM or
  // SIGINT arrives; then returns.
  void wait();

 private:
  void on_hangup();

  boost::asio::io_context context_;
  boost::asio::signal_set stops_{context_, SIGTERM, SIGINT};
  boost::asio::signal_set hangups_{context_, SIGHUP};
  ReloadHooks hooks_;
};

}  // namespace celos
