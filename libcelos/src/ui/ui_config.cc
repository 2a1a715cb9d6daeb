// The UI's configuration file (celos-ui --config, SPEC §9): named groups of workflows, read as
// JSON, each mistake an error saying what is wrong.
#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/ui.h"

namespace celos {

namespace json = boost::json;

Result<UiConfig> parse_ui_config(std::string_view text) {
  boost::system::error_code ec;
  const json::value root = json::parse(json::string_view(text.data(), text.size()), ec);
  if (ec) return fail(fmt::format("UI config is not JSON: {}", ec.message()), ErrorCode::kInvalid);
  if (!root.is_object()) return fail("UI config must be a JSON object", ErrorCode::kInvalid);
  UiConfig config;
  const json::value* groups = root.as_object().if_contains("groups");
  if (groups == nullptr) return config;
  if (!groups->is_array()) return fail("UI config: \"groups\" must be a list", ErrorCode::kInvalid);
  for (const json::value& g : groups->as_array()) {
    const json::object* obj = g.if_object();
    const json::value* name = obj ? obj->if_contains("name") : nullptr;
    const json::value* workflows = obj ? obj->if_contains("workflows") : nullptr;
    if (name == nullptr || !name->is_string()) {
      return fail("UI config: every group needs a \"name\" string", ErrorCode::kInvalid);
    }
    UiGroup group{std::string(name->as_string()), {}};
    if (workflows != nullptr) {
      if (!workflows->is_array()) {
        return fail(
            fmt::format("UI config: \"workflows\" of group '{}' must be a list", group.name),
            ErrorCode::kInvalid);
      }
      for (const json::value& w : workflows->as_array()) {
        if (!w.is_string()) {
          return fail(fmt::format("UI config: group '{}' lists a workflow that is not a string",
                                  group.name),
                      ErrorCode::kInvalid);
        }
        group.workflows.emplace_back(w.as_string());
      }
    }
    config.groups.push_back(std::move(group));
  }
  return config;
}

}  // namespace celos
