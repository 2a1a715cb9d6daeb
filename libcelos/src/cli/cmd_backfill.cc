// `celos backfill`: backfill plans (issue 29): list, show, create, pause, resume, cancel.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/format.h"
#include "cli/parse.h"
#include "cli/remote.h"

namespace celos::cli {
namespace {

namespace json = boost::json;

std::string plan_path(const std::string& id) { return "/api/v1/backfills/" + url_encode(id); }

std::string progress_text(const json::value& plan) {
  const json::value* slots = plan.is_object() ? plan.as_object().if_contains("slots") : nullptr;
  if (slots == nullptr || !slots->is_object()) return "";
  const std::int64_t total = int_of(*slots, "total");
  const std::int64_t done = int_of(*slots, "SUCCESS") + int_of(*slots, "FAILURE") +
                            int_of(*slots, "WAIT_TIMEOUT") + int_of(*slots, "KILLED");
  return fmt::format("{}/{} ({}%)", done, total, total > 0 ? done * 100 / total : 100);
}

void print_plans(const Context& ctx, const json::array& plans) {
  Table table({"ID", "STATE", "PROGRESS", "RUNNING", "RANGE", "WORKFLOWS", "ETA"});
  for (const auto& p : plans) {
    const json::value& slots = p.as_object().at("slots");
    std::string workflows;
    for (const auto& w : array_of(p, "workflows")) {
      workflows += (workflows.empty() ? "" : ",") + std::string(w.as_string());
    }
    table.add({{text_of(p, "id")},
               {text_of(p, "state")},
               {progress_text(p)},
               {std::to_string(int_of(slots, "RUNNING"))},
               {show_time(ctx.globals, text_of(p, "start")) + " - " +
                show_time(ctx.globals, text_of(p, "end"))},
               {workflows},
               {text_of(p, "eta").empty() ? "" : show_time(ctx.globals, text_of(p, "eta"))}});
  }
  table.print(ctx.out, ctx.color);
}

Outcome show(Context& ctx, Result<Answer> answer, bool many) {
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  if (many) {
    print_plans(ctx, array_of(answer->value, "backfills"));
  } else {
    print_plans(ctx, json::array{answer->value});
  }
  return {};
}

Outcome create(Context& ctx, const Args& args) {
  if (args.positional.size() != 2) return usage_error("backfill create needs WORKFLOWS");
  if (!args.value("--from") || !args.value("--to")) {
    return usage_error("backfill create needs --from T and --to T");
  }
  Params params{{"workflows", args.positional[1]}};
  if (auto r = add_range(ctx, args, params); !r) return r;
  for (const auto& [option, name] :
       {std::pair{"--reprocess", "reprocess"}, std::pair{"--order", "order"},
        std::pair{"--max-running", "maxRunning"}}) {
    if (const std::string* v = args.value(option)) params.emplace_back(name, *v);
  }
  const bool dry = args.has("--dry-run");
  if (dry) params.emplace_back("dryRun", "true");
  auto answer = post(ctx, "/api/v1/backfills", params);
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  if (dry) {
    ctx.out << fmt::format("dry run: {} slots\n", int_of(answer->value, "slots"));
  } else {
    ctx.out << fmt::format("backfill {}: {} slots\n", text_of(answer->value, "id"),
                           int_of(answer->value, "slots"));
  }
  const json::value* per = answer->value.as_object().if_contains("workflows");
  if (per && per->is_object()) {
    for (const auto& [w, n] : per->as_object())
      ctx.out << fmt::format("  {} {}\n", std::string(w), json::serialize(n));
  }
  return {};
}

Outcome run_backfill(Context& ctx, const Args& args) {
  const std::string action = args.positional.empty() ? "list" : args.positional[0];
  if (action == "list") return show(ctx, get(ctx, "/api/v1/backfills"), true);
  if (action == "create") return create(ctx, args);
  if (args.positional.size() != 2) return usage_error(fmt::format("backfill {} needs ID", action));
  const std::string& id = args.positional[1];
  if (action == "show") return show(ctx, get(ctx, plan_path(id)), false);
  if (action == "pause" || action == "resume" || action == "cancel") {
    return show(ctx, post(ctx, plan_path(id) + "/" + action), false);
  }
  return usage_error(fmt::format(
      "unknown backfill action \"{}\": list, show, create, pause, resume or cancel", action));
}

}  // namespace

std::vector<CommandSpec> backfill_commands() {
  return {
      {.name = "backfill",
       .synopsis = "[list | show ID | create WORKFLOWS --from T --to T | pause ID | resume ID | "
                   "cancel ID]",
       .summary = "backfill plans: rerun the slots of many workflows in a range, in their lane",
       .options = {{"--from", "T", "create: the range's start (inclusive)"},
                   {"--to", "T", "create: its end (exclusive)"},
                   {"--reprocess", "M", "create: missing (default), failed or all"},
                   {"--order", "O", "create: oldest (default) or newest first"},
                   {"--max-running", "N", "create: slots in flight at once (default 10)"},
                   {"--dry-run", "", "create: count the slots, create nothing"}},
       .max_args = 2,
       .routes = {"GET /api/v1/backfills", "POST /api/v1/backfills", "GET /api/v1/backfills/{id}",
                  "POST /api/v1/backfills/{id}/pause", "POST /api/v1/backfills/{id}/resume",
                  "POST /api/v1/backfills/{id}/cancel"},
       .details = "WORKFLOWS: comma-separated ids and globs with *, e.g. 'clicks-*,sessions'.\n"
                  "A running plan's slots use only the capacity live slots leave.\n",
       .run = run_backfill},
  };
}

}  // namespace celos::cli
