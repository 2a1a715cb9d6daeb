// The grid's optional view parameters (SPEC §16): a workflow filter and an auto-refresh. Both
// are applied by celos-ui itself, so a filtered page is as cheap to send as it looks.
#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "celos/ui.h"

namespace celos {

namespace {

char lower_char(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

Result<int> parse_refresh(const std::string* text) {
  if (text == nullptr || text->empty()) return 0;
  int value = -1;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  const bool whole = ec == std::errc() && end == text->data() + text->size();
  if (whole && (value == 0 || (value >= kMinRefreshSeconds && value <= kMaxRefreshSeconds))) {
    return value;
  }
  return fail(fmt::format("refresh must be 0 (off) or a whole number of seconds from {} to {}, "
                          "not \"{}\"",
                          kMinRefreshSeconds, kMaxRefreshSeconds, *text),
              ErrorCode::kInvalid);
}

bool workflow_matches_filter(std::string_view workflow_id, std::string_view filter) {
  if (filter.empty()) return true;
  const auto it = std::search(workflow_id.begin(), workflow_id.end(), filter.begin(), filter.end(),
                              [](char a, char b) { return lower_char(a) == lower_char(b); });
  return it != workflow_id.end();
}

void apply_filter(UiPage& page) {
  if (page.filter.empty()) return;
  const std::string& filter = page.filter;
  std::erase_if(page.workflows,
                [&](const UiWorkflow& wf) { return !workflow_matches_filter(wf.id, filter); });
  for (UiGroup& group : page.config.groups) {
    std::erase_if(group.workflows,
                  [&](const std::string& id) { return !workflow_matches_filter(id, filter); });
  }
  std::erase_if(page.config.groups, [](const UiGroup& g) { return g.workflows.empty(); });
}

}  // namespace celos
