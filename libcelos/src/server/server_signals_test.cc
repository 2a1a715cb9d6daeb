// celos-server's signals: SIGHUP runs the reload hooks (also one that came before wait()),
// SIGTERM and SIGINT end wait().
#include "server/server_signals.h"

#include <atomic>
#include <thread>

#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>

using namespace celos;

namespace {

// Waits (at most 20 s) until `done` holds, then sends `signal` to this process.
std::thread signal_when(std::function<bool()> done, int signal) {
  return std::thread([done = std::move(done), signal] {
    for (int i = 0; i < 2000 && !done(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(::getpid(), signal);
  });
}

}  // namespace

TEST_CASE("SIGHUP runs the reload hooks, in order, and SIGTERM ends the wait") {
  ServerSignals signals;
  std::atomic<int> reloads{0};
  std::string order;
  signals.reload_hooks().add("first", [&]() -> Result<void> {
    order += "a";
    return {};
  });
  signals.reload_hooks().add("second", [&]() -> Result<void> {
    order += "b";
    ++reloads;
    return {};
  });
  // Sent before wait() runs: kept, not fatal, and run once wait() does.
  ::kill(::getpid(), SIGHUP);
  std::thread sender = signal_when([&] { return reloads.load() == 1; }, SIGHUP);
  std::thread stopper = signal_when([&] { return reloads.load() == 2; }, SIGTERM);
  signals.wait();
  sender.join();
  stopper.join();
  CHECK(reloads.load() == 2);
  CHECK(order == "abab");
}

TEST_CASE("SIGINT ends the wait too, also when it came before") {
  ServerSignals signals;
  ::kill(::getpid(), SIGINT);
  signals.wait();  // returns: the early SIGINT was kept
  SUCCEED();
}
