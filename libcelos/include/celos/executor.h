// Runs the independent external calls of a step concurrently (SPEC §10).
//
// The step hands an Executor a batch of tasks (a workflow's chain of submissions, a status
// query, a data check) and waits for all of them; each task fills its own result, and only the
// step's thread changes slots or writes state, as Ninja's Builder hands commands to a
// CommandRunner. The scheduling model sees only this interface: the real implementation is a
// bounded pool of threads (make_thread_pool_executor), the unit tests' is inline.
#pragma once

#include <functional>
#include <memory>
#include <vector>

namespace celos {

class Executor {
 public:
  virtual ~Executor() = default;
  // Runs every task and returns when all have finished. At most width() run at the same time.
  // Tasks must not throw (the step catches per workflow inside them); a task that throws
  // anyway ends the process, as any bug on a thread would.
  virtual void run_all(std::vector<std::function<void()>> tasks) = 0;
  // How many tasks may run at once (1 = one call at a time, the behaviour before SPEC §10).
  virtual int width() const = 0;
};

// Runs the tasks one after another on the calling thread, in order: deterministic tests and
// `--io-concurrency 1`.
std::unique_ptr<Executor> make_inline_executor();

// A pool of `width` threads (1..1024), started once and reused by every run_all(). With
// width 1 it behaves as the inline executor.
std::unique_ptr<Executor> make_thread_pool_executor(int width);

}  // namespace celos
