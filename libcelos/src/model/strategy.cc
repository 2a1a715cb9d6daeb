#include "celos/strategy.h"

#include <algorithm>

#include <fmt/format.h>

namespace celos {
namespace {

class SerialStrategy final : public SchedulingStrategy {
 public:
  explicit SerialStrategy(int concurrency) : concurrency_(std::max(1, concurrency)) {}

  std::vector<SlotState> pick(const std::vector<SlotState>& slots) const override {
    const auto running = std::count_if(slots.begin(), slots.end(), [](const SlotState& s) {
      return s.status == SlotStatus::kRunning;
    });
    std::vector<SlotState> ready;
    for (const SlotState& s : slots) {
      if (s.status == SlotStatus::kReady) ready.push_back(s);
    }
    std::sort(ready.begin(), ready.end(),
              [](const SlotState& a, const SlotState& b) { return a.id.time < b.id.time; });
    const auto free = std::max<std::ptrdiff_t>(0, concurrency_ - running);
    if (static_cast<std::ptrdiff_t>(ready.size()) > free) ready.resize(free);
    return ready;
  }
  std::string describe() const override {
    return fmt::format("serialSchedulingStrategy({})", concurrency_);
  }

 private:
  int concurrency_;
};

}  // namespace

std::shared_ptr<const SchedulingStrategy> make_serial_strategy(int concurrency) {
  return std::make_shared<SerialStrategy>(concurrency);
}

}  // namespace celos
