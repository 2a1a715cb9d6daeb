// Commands that read slots: status, slots, why, history, state, workflows (log: cmd_log.cc).
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "celos/ui.h"
#include "cli/command.h"
#include "cli/format.h"
#include "cli/parse.h"
#include "cli/remote.h"

namespace celos::cli {
namespace {

namespace json = boost::json;

constexpr std::size_t kRecentSlots = 24;

char glyph(std::string_view status) {
  if (status == "SUCCESS") return '.';
  if (status == "FAILURE") return 'F';
  if (status == "WAIT_TIMEOUT") return 'T';
  if (status == "KILLED") return 'K';
  if (status == "RUNNING") return 'R';
  if (status == "READY") return 'r';
  return '-';
}

struct Counts {
  int failed = 0, running = 0, waiting = 0;
};

Counts count(const json::array& slots) {
  Counts c;
  for (const auto& slot : slots) {
    const std::string s = text_of(slot, "status");
    c.failed += s == "FAILURE" || s == "WAIT_TIMEOUT";
    c.running += s == "RUNNING" || s == "READY";
    c.waiting += s == "WAITING";
  }
  return c;
}

// The newest slots, oldest left, one coloured glyph each (slots come newest first).
std::string recent(const json::array& slots, bool color) {
  std::string out;
  const std::size_t n = std::min(slots.size(), kRecentSlots);
  for (std::size_t i = n; i-- > 0;) {
    const std::string s = text_of(slots[i], "status");
    out += paint(color, status_color(s), std::string(1, glyph(s)));
  }
  return out;
}

// The workflows of group `name` in celos-ui's config (--ui-config or $CELOS_UI_CONFIG).
Result<std::set<std::string>> group_members(const Context& ctx, const Args& args,
                                            const std::string& name) {
  const std::string* option = args.value("--ui-config");
  const std::string path = option ? *option : ctx.env.ui_config;
  if (path.empty()) {
    return usage_error("--group needs celos-ui's config file: --ui-config FILE or CELOS_UI_CONFIG");
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return usage_error(fmt::format("--ui-config: cannot read \"{}\"", path));
  auto config = parse_ui_config(text.str());
  if (!config) return usage_error(fmt::format("{}: {}", path, config.error().message));
  for (const UiGroup& group : config->groups) {
    if (group.name == name)
      return std::set<std::string>(group.workflows.begin(), group.workflows.end());
  }
  return usage_error(fmt::format("no group \"{}\" in {}", name, path));
}

bool keep(const Args& args, const json::value& wf, const std::set<std::string>* members) {
  if (members && !members->count(text_of(wf, "id"))) return false;
  const Counts c = count(array_of(wf, "slots"));
  if (args.has("--failed")) return c.failed > 0;
  if (args.has("--running")) return c.running > 0;
  if (args.has("--waiting")) return c.waiting > 0;
  return true;
}

void print_status(const Context& ctx, const std::vector<const json::value*>& workflows) {
  Table table({"WORKFLOW", "LAST SLOT", "STATUS", "FAILED", "RUNNING", "WAITING", "RECENT"});
  for (const json::value* entry : workflows) {
    const json::value& wf = *entry;
    const json::array& slots = array_of(wf, "slots");
    const std::string last = slots.empty() ? "" : text_of(slots.front(), "status");
    Cell status{last, status_color(last)};
    if (!text_of(wf, "error").empty()) status = {"ERROR", Color::kRed};
    if (bool_of(wf, "paused")) status.text += " (paused)";
    const Counts c = count(slots);
    const std::string error = text_of(wf, "error");
    table.add({{text_of(wf, "id")},
               {slots.empty() ? "" : show_time(ctx.globals, text_of(slots.front(), "time"))},
               status,
               {std::to_string(c.failed), c.failed ? Color::kRed : Color::kNone},
               {std::to_string(c.running)},
               {std::to_string(c.waiting)},
               {error.empty() ? recent(slots, ctx.color) : error}});
  }
  table.print(ctx.out, ctx.color);
}

Outcome run_status(Context& ctx, const Args& args) {
  if (args.has("--failed") + args.has("--running") + args.has("--waiting") > 1) {
    return usage_error("give one of --failed, --running, --waiting");
  }
  std::optional<std::set<std::string>> members;
  if (const std::string* group = args.value("--group")) {
    auto m = group_members(ctx, args, *group);
    if (!m) return tl::unexpected(m.error());
    members = std::move(*m);
  }
  Params params;
  if (auto r = add_range(ctx, args, params); !r) return r;
  if (!args.value("--from")) {
    params.emplace_back("start", format_time(ctx.clock.now() - std::chrono::hours(24)));
  }
  auto answer = get(ctx, "/api/v1/multi-workflow-slots", params);
  if (!answer) return tl::unexpected(answer.error());
  std::vector<const json::value*> kept;
  for (const auto& wf : array_of(answer->value, "workflows")) {
    if (keep(args, wf, members ? &*members : nullptr)) kept.push_back(&wf);
  }
  const bool filtered =
      members || args.has("--failed") || args.has("--running") || args.has("--waiting");
  if (ctx.globals.json && filtered) {
    json::array selected;
    for (const json::value* wf : kept) selected.push_back(*wf);
    ctx.out << json::serialize(json::object{{"workflows", std::move(selected)}}) << '\n';
  } else if (!print_raw(ctx, *answer)) {
    print_status(ctx, kept);
  }
  return {};
}

Outcome run_slots(Context& ctx, const Args& args) {
  Params params{{"id", args.positional[0]}};
  if (auto r = add_range(ctx, args, params); !r) return r;
  auto answer = get(ctx, "/api/v1/workflow-slots", params);
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  if (bool_of(answer->value, "paused")) {
    ctx.out << paint(ctx.color, Color::kYellow, args.positional[0] + " is paused") << '\n';
  }
  Table table({"SLOT", "STATUS", "RETRIES", "EXTERNAL ID"});
  for (const auto& slot : array_of(answer->value, "slots")) {
    const std::string s = text_of(slot, "status");
    table.add({{show_time(ctx.globals, text_of(slot, "time"))},
               {s, status_color(s)},
               {std::to_string(int_of(slot, "retryCount"))},
               {text_of(slot, "externalID")}});
  }
  table.print(ctx.out, ctx.color);
  return {};
}

void print_tree(const Context& ctx, const json::value& node, int depth) {
  const bool ready = bool_of(node, "ready");
  ctx.out << std::string(static_cast<std::size_t>(depth) * 2, ' ')
          << paint(ctx.color, ready ? Color::kGreen : Color::kRed, ready ? "ready  " : "missing")
          << ' ' << text_of(node, "type") << ": " << text_of(node, "description") << '\n';
  for (const auto& sub : array_of(node, "subStatuses")) print_tree(ctx, sub, depth + 1);
}

Outcome run_why(Context& ctx, const Args& args) {
  auto params = slot_params(ctx, args.positional[0], args.positional[1]);
  if (!params) return tl::unexpected(params.error());
  auto answer = get(ctx, "/api/v1/trigger-status", *params);
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  print_tree(ctx, answer->value, 0);
  if (const std::string next = text_of(answer->value, "nextCheckAt"); !next.empty()) {
    ctx.out << "data checked again at " << show_time(ctx.globals, next)
            << " (backing off; an event checks at once)\n";
  }
  return {};
}

Outcome run_history(Context& ctx, const Args& args) {
  auto params = slot_params(ctx, args.positional[0], args.positional[1]);
  if (!params) return tl::unexpected(params.error());
  auto answer = get(ctx, "/api/v1/slot-history", *params);
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  Table table({"AT", "FROM", "TO", "BY", "EXTERNAL ID", "RETRIES", "MESSAGE"});
  const json::array* changes = answer->value.if_array();
  for (const auto& e : changes ? *changes : json::array{}) {
    const std::string from = text_of(e, "from"), to = text_of(e, "to");
    table.add({{show_time(ctx.globals, text_of(e, "at"))},
               {from.empty() ? "-" : from, status_color(from)},
               {to, status_color(to)},
               {text_of(e, "by")},
               {text_of(e, "externalID")},
               {std::to_string(int_of(e, "retryCount"))},
               {text_of(e, "message")}});
  }
  if (table.empty())
    ctx.out << "no changes stored for this slot\n";
  else
    table.print(ctx.out, ctx.color);
  return {};
}

Outcome run_state(Context& ctx, const Args& args) {
  auto params = slot_params(ctx, args.positional[0], args.positional[1]);
  if (!params) return tl::unexpected(params.error());
  auto answer = get(ctx, "/api/v1/slot-state", *params);
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  const std::string s = text_of(answer->value, "status");
  Table table({"SLOT", "STATUS", "RETRIES", "EXTERNAL ID"});
  table.add({{show_time(ctx.globals, text_of(answer->value, "time"))},
             {s, status_color(s)},
             {std::to_string(int_of(answer->value, "retryCount"))},
             {text_of(answer->value, "externalID")}});
  table.print(ctx.out, ctx.color);
  return {};
}

Outcome run_workflows(Context& ctx, const Args&) {
  auto answer = get(ctx, "/api/v1/workflow-list");
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  for (const auto& id : array_of(answer->value, "ids")) {
    ctx.out << (id.is_string() ? std::string(id.get_string()) : json::serialize(id)) << '\n';
  }
  return {};
}

const std::vector<OptionSpec> kRange = {{"--from", "T", "first slot time (inclusive)"},
                                        {"--to", "T", "end of the range (exclusive)"}};

}  // namespace

std::vector<CommandSpec> slot_commands() {
  std::vector<OptionSpec> status_options = kRange;
  status_options[0].help = "first slot time (default: 24 hours ago)";
  status_options.insert(status_options.end(),
                        {{"--group", "G", "only the workflows of group G of celos-ui's config"},
                         {"--ui-config", "FILE", "celos-ui's config (default $CELOS_UI_CONFIG)"},
                         {"--failed", "", "only workflows with FAILURE or WAIT_TIMEOUT slots"},
                         {"--running", "", "only workflows with READY or RUNNING slots"},
                         {"--waiting", "", "only workflows with WAITING slots"}});
  return {
      {.name = "status",
       .synopsis = "[--group G] [--failed|--running|--waiting] [--from T] [--to T]",
       .summary = "every workflow with its latest slots, as the grid shows them",
       .options = status_options,
       .routes = {"GET /api/v1/multi-workflow-slots"},
       .details = "RECENT: the newest 24 slots, oldest left: . SUCCESS, F FAILURE, T "
                  "WAIT_TIMEOUT, K KILLED, R RUNNING, r READY, - WAITING.",
       .run = run_status},
      {.name = "slots",
       .synopsis = "W [--from T] [--to T]",
       .summary = "the slots of workflow W, newest first (default: the last 7 days)",
       .options = kRange,
       .min_args = 1,
       .max_args = 1,
       .routes = {"GET /api/v1/workflow-slots"},
       .run = run_slots},
      {.name = "why",
       .synopsis = "W T",
       .summary = "the trigger tree of slot T of W: what is ready and what is missing",
       .min_args = 2,
       .max_args = 2,
       .routes = {"GET /api/v1/trigger-status"},
       .run = run_why},
      {.name = "history",
       .synopsis = "W T",
       .summary = "every state change of slot T of W, oldest first",
       .min_args = 2,
       .max_args = 2,
       .routes = {"GET /api/v1/slot-history"},
       .run = run_history},
      log_command(),
      {.name = "state",
       .synopsis = "W T",
       .summary = "the stored state of slot T of W (404: nothing stored, i.e. WAITING)",
       .min_args = 2,
       .max_args = 2,
       .routes = {"GET /api/v1/slot-state"},
       .run = run_state},
      {.name = "workflows",
       .summary = "the ids of the loaded workflows",
       .routes = {"GET /api/v1/workflow-list"},
       .run = run_workflows},
  };
}

}  // namespace celos::cli
