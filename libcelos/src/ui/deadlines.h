// Deadlines in celos-ui (issue 27): the at-risk and missed slots read from celos-server's
// GET /api/v1/deadlines, a mark on their tiles and a list above the grid. Private to ui/.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "celos/error.h"
#include "celos/ui.h"

namespace celos {

// {"deadlines": [{"workflow", "time", "deadline", "state", "reason"}…]}; kInvalid when the text
// is not that.
[[nodiscard]] Result<std::vector<UiDeadline>> parse_ui_deadlines(std::string_view json);

// The deadline states `page.deadlines` lists for one workflow's slots, by slot time.
std::map<Time, DeadlineState> deadline_marks(const UiPage& page, std::string_view workflow);

// The list of at-risk and missed slots (nothing when there are none), and its CSS.
void render_deadline_list(std::string& out, const UiPage& page);
std::string_view ui_deadline_style();

}  // namespace celos
