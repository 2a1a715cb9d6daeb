// StateDatabase::get_window for backends without a cheaper way: from get_slots.
#include "celos/state_db.h"

namespace celos {

Result<StateDatabase::Window> StateDatabase::get_window(std::string_view workflow, Time start,
                                                        Time end) {
  auto slots = get_slots(workflow, start, end);
  if (!slots) return tl::unexpected(slots.error());
  Window window;
  for (SlotState& s : *slots) {
    if (is_final(s.status)) {
      window.closed.emplace_back(s.id.time, s.status);
    } else {
      window.open.push_back(std::move(s));
    }
  }
  return window;
}

}  // namespace celos
