#include "celos/clock.h"

#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

namespace celos {
namespace {

using std::chrono::milliseconds;

// Polls `done` for up to 10 s of real time (a thread of the test has to get there first).
template <typename F>
bool eventually(F done) {
  for (int i = 0; i < 10'000 && !done(); ++i) std::this_thread::sleep_for(milliseconds(1));
  return done();
}

TEST_CASE("ManualClock: a sleeper wakes when the clock is advanced past its deadline, not before") {
  ManualClock clock(make_time(2026, 3, 29, 0, 59));
  std::atomic<int> result{-1};
  std::thread sleeper([&] { result = clock.sleep_for(milliseconds(60'000)) ? 1 : 0; });
  REQUIRE(eventually([&] { return clock.sleepers() == 1; }));
  clock.advance(milliseconds(59'999));
  std::this_thread::sleep_for(milliseconds(20));
  CHECK(result == -1);
  CHECK(clock.sleepers() == 1);
  clock.advance(milliseconds(1));
  sleeper.join();
  CHECK(result == 1);
  CHECK(clock.now() == make_time(2026, 3, 29, 1, 0));
}

TEST_CASE("ManualClock: a stop condition ends the wait with false once the clock is woken") {
  ManualClock clock;
  std::atomic<bool> stopping{false};
  std::atomic<int> result{-1};
  std::thread sleeper([&] {
    result = clock.sleep_for(milliseconds(1'000), [&] { return stopping.load(); }) ? 1 : 0;
  });
  REQUIRE(eventually([&] { return clock.sleepers() == 1; }));
  stopping = true;
  clock.wake_all();
  sleeper.join();
  CHECK(result == 0);
  CHECK(clock.sleep_for(milliseconds(0)));  // a deadline already reached returns at once
}

TEST_CASE("ManualClock: the wall clock can jump while the monotonic clock does not") {
  ManualClock clock(make_time(2026, 1, 1));
  const auto before = clock.monotonic();
  clock.set_wall(make_time(2025, 12, 31));
  CHECK(clock.now() == make_time(2025, 12, 31));
  CHECK(clock.monotonic() == before);
  clock.advance(milliseconds(1'500));
  CHECK(clock.monotonic() - before == milliseconds(1'500));
  CHECK(clock.now() == make_time(2025, 12, 31) + milliseconds(1'500));
  CHECK_THROWS_AS(clock.advance(milliseconds(-1)), std::invalid_argument);
}

// A thread of a component that waits on its own condition variable with a timeout on the clock
// (celos/clock.h's wait_until loop): what it waited for, the deadline it met or `stopping_`.
struct Waiter {
  explicit Waiter(Clock& c) : clock(c) {}
  // 1: the deadline came; 0: stopped first.
  int wait(milliseconds timeout) {
    MutexLock lock(mutex);
    const auto deadline = clock.monotonic() + timeout;
    while (!stopping) {
      if (!clock.wait_until(wake, mutex, deadline)) return 1;
    }
    return 0;
  }
  void stop() {
    MutexLock lock(mutex);
    stopping = true;
    wake.notify_all();
  }
  Clock& clock;
  Mutex mutex;
  CondVar wake;
  bool stopping GUARDED_BY(mutex) = false;
};

TEST_CASE("ManualClock: a condition wait times out when the clock is advanced, not before") {
  ManualClock clock;
  Waiter waiter(clock);
  std::atomic<int> result{-1};
  std::thread thread([&] { result = waiter.wait(milliseconds(30'000)); });
  REQUIRE(eventually([&] { return clock.sleepers() == 1; }));
  clock.advance(milliseconds(29'999));
  std::this_thread::sleep_for(milliseconds(20));
  CHECK(result == -1);
  clock.advance(milliseconds(1));
  thread.join();
  CHECK(result == 1);
  CHECK(clock.sleepers() == 0);
}

TEST_CASE("ManualClock: a condition wait ends when the condition is notified") {
  ManualClock clock;
  Waiter waiter(clock);
  std::atomic<int> result{-1};
  std::thread thread([&] { result = waiter.wait(milliseconds(30'000)); });
  REQUIRE(eventually([&] { return clock.sleepers() == 1; }));
  waiter.stop();
  thread.join();
  CHECK(result == 0);
  Mutex mutex;
  CondVar cv;
  MutexLock lock(mutex);
  CHECK_FALSE(clock.wait_for(cv, mutex, milliseconds(0)));  // a deadline already reached
}

TEST_CASE("system_clock: a condition wait ends at its deadline or when notified") {
  Waiter waiter(system_clock());
  CHECK(waiter.wait(milliseconds(5)) == 1);
  std::atomic<int> result{-1};
  std::thread thread([&] { result = waiter.wait(std::chrono::hours(1)); });
  waiter.stop();
  thread.join();
  CHECK(result == 0);
}

TEST_CASE("system_clock: now is UTC wall time, sleeps end at the deadline or at stop") {
  Clock& clock = system_clock();
  const auto wall = std::chrono::time_point_cast<milliseconds>(std::chrono::system_clock::now());
  CHECK(std::chrono::abs(clock.now() - wall) < std::chrono::seconds(5));
  const auto start = clock.monotonic();
  CHECK(clock.sleep_for(milliseconds(5)));
  CHECK(clock.monotonic() - start >= milliseconds(5));

  std::atomic<bool> stopping{false};
  std::atomic<int> result{-1};
  std::thread sleeper([&] {
    result = clock.sleep_for(std::chrono::hours(1), [&] { return stopping.load(); }) ? 1 : 0;
  });
  stopping = true;
  clock.wake_all();
  sleeper.join();  // an hour's sleep that did not end would hang the test (ctest's timeout)
  CHECK(result == 0);
}

}  // namespace
}  // namespace celos
