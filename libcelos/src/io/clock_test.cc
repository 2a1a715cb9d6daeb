#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "celos/clock.h"

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
