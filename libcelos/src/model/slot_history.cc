#include "celos/slot_history.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace celos {
namespace {

SlotHistoryEntry entry_of(const SlotChange& change) {
  return SlotHistoryEntry{
      change.at, change.from ? std::optional<SlotStatus>(change.from->status) : std::nullopt,
      change.to, change.by};
}

class HistoryRecorder final : public SchedulerListener {
 public:
  explicit HistoryRecorder(StateDatabase& db) : db_(db) {}

  void on_slot_changes(const std::vector<SlotChange>& changes) override {
    std::vector<SlotHistoryEntry> now;
    {
      MutexLock lock(mutex_);
      for (const SlotChange& c : changes) {
        // A step reports its changes in phases; they are appended together in on_step.
        (c.by == "step" ? pending_ : now).push_back(entry_of(c));
      }
    }
    append(now);
  }

  void on_step(const StepReport&) override {
    std::vector<SlotHistoryEntry> entries;
    {
      MutexLock lock(mutex_);
      entries.swap(pending_);
    }
    append(entries);
  }

 private:
  void append(const std::vector<SlotHistoryEntry>& entries) {
    if (entries.empty()) return;
    if (auto done = db_.append_history(entries); !done) {
      spdlog::error("slot history: {} changes not recorded: {}", entries.size(),
                    done.error().message);
    }
  }

  StateDatabase& db_;
  Mutex mutex_;
  std::vector<SlotHistoryEntry> pending_ GUARDED_BY(mutex_);
};

}  // namespace

std::unique_ptr<SchedulerListener> make_history_recorder(StateDatabase& db) {
  return std::make_unique<HistoryRecorder>(db);
}

Result<std::vector<SlotHistoryEntry>> Scheduler::slot_history(const std::string& workflow,
                                                              Time slot_time) {
  auto config = this->config();
  if (auto wf = find_slot(*config, workflow, slot_time); !wf) return tl::unexpected(wf.error());
  return db_.slot_history(SlotId{workflow, slot_time});
}

void prune_slot_history(StateDatabase& db, Time now, std::chrono::days retention, Clock& clock) {
  const Time before = now - retention;
  const auto started = clock.monotonic();
  auto pruned = db.prune_history(before);
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock.monotonic() - started);
  if (!pruned) {
    spdlog::error("slot history: pruning the changes before {} failed after {} ms: {}",
                  format_time(before), took.count(), pruned.error().message);
    return;
  }
  spdlog::info("slot history: pruned {} changes of slots before {} ({} days kept) in {} ms",
               *pruned, format_time(before), retention.count(), took.count());
}

std::string api_actor(std::string_view token_name, std::string_view client) {
  return fmt::format("api:{}@{}", token_name.empty() ? "anonymous" : token_name,
                     client.empty() ? "unknown" : client);
}

}  // namespace celos
