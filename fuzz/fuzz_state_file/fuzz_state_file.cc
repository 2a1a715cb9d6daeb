// State files (SPEC §5): any content is read or refused with an error (kCorrupt), never a
// crash; what is read prints back to JSON that reads back to the same state.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "celos/state_codecs.h"
#include "celos/state_db.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  const celos::SlotId id{"wf", celos::make_time(2015, 9, 13, 13)};
  auto state = celos::slot_state_from_json(id, json);
  if (!state) return 0;
  auto again = celos::slot_state_from_json(id, celos::slot_state_to_json(*state));
  if (!again || !(*again == *state)) __builtin_trap();
  return 0;
}
