#include "celos/workflow.h"

#include <fmt/format.h>

namespace celos {
namespace {

class StaticWorkflowSource final : public WorkflowSource {
 public:
  explicit StaticWorkflowSource(WorkflowConfigPtr config) : config_(std::move(config)) {}
  WorkflowConfigPtr load() override { return config_; }
  void clear_cache() override {}

 private:
  WorkflowConfigPtr config_;
};

}  // namespace

Result<void> validate_workflow_id(std::string_view id) {
  auto bad = [&](std::string_view why) {
    return fail(fmt::format("invalid workflow id \"{}\": {}", id, why), ErrorCode::kInvalid);
  };
  if (id.find_first_not_of(" \t\r\n") == std::string_view::npos) return bad("empty or blank");
  if (id == "." || id == "..") return bad("must not be . or ..");
  // Ids name directories of the state database: every file system takes 200 bytes (most limit
  // a name to 255), and the message must not print a megabyte.
  if (id.size() > kMaxWorkflowIdBytes) {
    return fail(fmt::format("invalid workflow id \"{}...\": longer than {} bytes ({})",
                            id.substr(0, 40), kMaxWorkflowIdBytes, id.size()),
                ErrorCode::kInvalid);
  }
  for (char c : id) {
    if (c == '/') return bad("contains /");
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return bad("contains a control character");
  }
  return {};
}

const Workflow* WorkflowConfig::find(std::string_view id) const {
  auto it = workflows.find(id);
  return it == workflows.end() ? nullptr : &it->second;
}

ScheduleContext WorkflowConfig::schedule_context() const {
  ScheduleContext context;
  context.lookup = [this](std::string_view id) -> const Schedule* {
    const Workflow* w = find(id);
    return w ? w->schedule.get() : nullptr;
  };
  return context;
}

std::unique_ptr<WorkflowSource> make_static_workflow_source(WorkflowConfigPtr config) {
  return std::make_unique<StaticWorkflowSource>(std::move(config));
}

}  // namespace celos
