// What wakes the scheduler between periodic steps (issue 28): the sources of events that make
// celos-server step the affected workflows at once. The names are the `event` label of
// celos_event_to_submit_seconds and appear in the step log line.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace celos {

enum class EventSource {
  kAnnouncement,  // POST /api/v1/datasets/{id}/instances: the dataset's consumers
  kSlot,          // a slot changed state: the workflows whose triggers read it
  kJob,           // a job ended (command wrapper's exit record, Oozie's notification)
  kFile,          // a file appeared under a watched local path
  kOperator,      // rerun, kill, range operation: that workflow
};

inline constexpr std::array<std::string_view, 5> kEventSourceNames{"announcement", "slot", "job",
                                                                   "file", "operator"};
inline std::string_view to_string(EventSource source) {
  return kEventSourceNames[static_cast<std::size_t>(source)];
}

// Where an event goes: the workflows it may have made ready. Must not block (it queues).
using EventSink = std::function<void(EventSource, const std::vector<std::string>& workflows)>;

}  // namespace celos
