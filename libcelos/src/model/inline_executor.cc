#include "celos/executor.h"

namespace celos {
namespace {

class InlineExecutor final : public Executor {
 public:
  void run_all(std::vector<std::function<void()>> tasks) override {
    for (auto& task : tasks) task();
  }
  int width() const override { return 1; }
};

}  // namespace

std::unique_ptr<Executor> make_inline_executor() { return std::make_unique<InlineExecutor>(); }

}  // namespace celos
