// Commands that change slots and steps: rerun, kill, pause, unpause, step, reload. Every change
// is a request to the same /api/v1 route a script would call, so the server audits it the same
// way (SPEC §16); the command line changes nothing by itself.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/format.h"
#include "cli/parse.h"
#include "cli/remote.h"

namespace celos::cli {
namespace {

namespace json = boost::json;

// Range operations over more slots than this are a dry run unless --yes is given.
constexpr std::size_t kConfirmAbove = 100;

struct RangeRequest {
  std::string verb;  // "rerun" or "kill"
  std::string route;
  Params params;
  bool range = false;  // --from/--to rather than one slot
};

Result<RangeRequest> range_args(const Context& ctx, const Args& args, std::string verb) {
  RangeRequest r{verb, "/api/v1/" + verb, {{"id", args.positional[0]}}};
  const bool from = args.value("--from") != nullptr, to = args.value("--to") != nullptr;
  if (args.positional.size() == 2) {
    if (from || to) return usage_error("give a slot time T or --from and --to, not both");
    auto t = server_time(args.positional[1], ctx.globals, "T");
    if (!t) return tl::unexpected(t.error());
    r.params.emplace_back("time", *t);
  } else if (from && to) {
    r.range = true;
    if (auto added = add_range(ctx, args, r.params); !added) return tl::unexpected(added.error());
  } else {
    return usage_error("give a slot time T, or both --from T and --to T");
  }
  if (const std::string* status = args.value("--status")) r.params.emplace_back("status", *status);
  return r;
}

void print_range(const Context& ctx, const RangeRequest& r, const json::value& answer) {
  const json::array& slots = array_of(answer, "slots");
  const json::array& skipped = array_of(answer, "skipped");
  const bool dry = bool_of(answer, "dryRun");
  ctx.out << fmt::format("{}{} {}: {} slot{}\n", dry ? "dry run: would " : "", r.verb,
                         r.params[0].second, slots.size(), slots.size() == 1 ? "" : "s");
  Table table({"SLOT", "FROM", "TO"});
  for (const auto& s : slots) {
    const std::string from = text_of(s, "from"), to = text_of(s, "to");
    table.add({{show_time(ctx.globals, text_of(s, "time"))},
               {from.empty() ? "(nothing stored)" : from, status_color(from)},
               {to, status_color(to)}});
  }
  if (!table.empty()) table.print(ctx.out, ctx.color);
  if (skipped.empty()) return;
  ctx.out << fmt::format("skipped: {}\n", skipped.size());
  Table skip({"SLOT", "STATUS", "REASON"});
  for (const auto& s : skipped) {
    const std::string status = text_of(s, "status");
    skip.add({{show_time(ctx.globals, text_of(s, "time"))},
              {status, status_color(status)},
              {text_of(s, "reason"), Color::kRed}});
  }
  skip.print(ctx.out, ctx.color);
}

// Prints an answer of the range shape; a real run that skipped slots was refused in part.
Outcome report_range(const Context& ctx, const RangeRequest& r, const Answer& answer) {
  if (!print_raw(ctx, answer)) print_range(ctx, r, answer.value);
  const std::size_t skipped = array_of(answer.value, "skipped").size();
  if (skipped == 0 || bool_of(answer.value, "dryRun")) return {};
  return fail(fmt::format("{} slot{} could not be {}", skipped, skipped == 1 ? "" : "s",
                          r.verb == "kill" ? "killed" : "rerun"));
}

std::string confirm_command(const RangeRequest& r) {
  std::string line = "celos " + r.verb + " " + r.params[0].second;
  for (const auto& [name, value] : r.params) {
    if (name == "start" || name == "end" || name == "status") {
      line += fmt::format(" --{} {}",
                          name == "start" ? "from"
                          : name == "end" ? "to"
                                          : name,
                          value);
    }
  }
  return line + " --yes";
}

Outcome run_range(Context& ctx, const Args& args, const std::string& verb) {
  auto r = range_args(ctx, args, verb);
  if (!r) return tl::unexpected(r.error());
  if (!r->range && !args.has("--dry-run")) {
    auto answer = post(ctx, r->route, r->params);
    if (!answer) return tl::unexpected(answer.error());
    if (print_raw(ctx, *answer)) return {};
    const std::string status = text_of(answer->value, "status");
    ctx.out << fmt::format("{} {} {}: now {}\n", verb, r->params[0].second,
                           show_time(ctx.globals, text_of(answer->value, "time")),
                           paint(ctx.color, status_color(status), status));
    return {};
  }
  if (!args.has("--dry-run") && args.has("--yes")) {
    auto answer = post(ctx, r->route, r->params);
    if (!answer) return tl::unexpected(answer.error());
    return report_range(ctx, *r, *answer);
  }
  Params dry = r->params;
  dry.emplace_back("dryRun", "true");
  auto preview = post(ctx, r->route, dry);
  if (!preview) return tl::unexpected(preview.error());
  const std::size_t n = array_of(preview->value, "slots").size();
  if (args.has("--dry-run") || n > kConfirmAbove) {
    auto reported = report_range(ctx, *r, *preview);
    if (!args.has("--dry-run")) {
      (ctx.globals.json ? ctx.err : ctx.out)
          << fmt::format("this was a dry run: {} slots is more than {}; to do it: {}\n", n,
                         kConfirmAbove, confirm_command(*r));
    }
    return reported;
  }
  auto answer = post(ctx, r->route, r->params);
  if (!answer) return tl::unexpected(answer.error());
  return report_range(ctx, *r, *answer);
}

Outcome run_pause(Context& ctx, const std::string& id, bool paused) {
  auto answer = post(ctx, "/api/v1/pause", {{"id", id}, {"paused", paused ? "true" : "false"}});
  if (!answer) return tl::unexpected(answer.error());
  if (!print_raw(ctx, *answer)) {
    ctx.out << fmt::format("{} is {}\n", id,
                           bool_of(answer->value, "paused") ? "paused" : "not paused");
  }
  return {};
}

void print_errors(const Context& ctx, const json::value& answer) {
  for (const auto& e : array_of(answer, "errors")) {
    ctx.out << paint(ctx.color, Color::kRed,
                     "error: " + (e.is_string() ? std::string(e.get_string()) : json::serialize(e)))
            << '\n';
  }
}

Outcome run_step(Context& ctx, const Args& args) {
  Params params;
  if (!args.positional.empty()) {
    auto t = server_time(args.positional[0], ctx.globals, "T");
    if (!t) return tl::unexpected(t.error());
    params.emplace_back("time", *t);
  }
  if (const std::string* ids = args.value("--ids")) params.emplace_back("ids", *ids);
  auto answer = post(ctx, "/api/v1/scheduler", params);
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  const json::value& a = answer->value;
  ctx.out << fmt::format(
      "step at {}: {} workflows, {} slots changed, {} submitted, {} ms{}\n",
      show_time(ctx.globals, text_of(a, "time")), int_of(a, "workflows"), int_of(a, "changed"),
      int_of(a, "submitted"), int_of(a, "durationMs"),
      text_of(a, "maintenance").empty() ? "" : " (maintenance " + text_of(a, "maintenance") + ")");
  print_errors(ctx, a);
  return {};
}

Outcome run_reload(Context& ctx, const Args&) {
  auto answer = post(ctx, "/api/v1/clear-cache");
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  ctx.out << fmt::format("{} workflows loaded\n", int_of(answer->value, "workflows"));
  print_errors(ctx, answer->value);
  return {};
}

std::vector<OptionSpec> range_options(const std::string& verb) {
  return {{"--from", "T", "first slot of the range (inclusive)"},
          {"--to", "T", "end of the range (exclusive)"},
          {"--status", "S,...", "only slots in these statuses, e.g. FAILURE,WAIT_TIMEOUT"},
          {"--dry-run", "", "change nothing, show what would " + verb},
          {"--yes", "",
           fmt::format("do it even when the range has more than {} slots", kConfirmAbove)}};
}

CommandSpec range_command(const std::string& verb, std::string summary) {
  return {
      .name = verb,
      .synopsis = "W [T | --from T --to T] [--status S] [--dry-run] [--yes]",
      .summary = std::move(summary),
      .options = range_options(verb),
      .min_args = 1,
      .max_args = 2,
      .routes = {"POST /api/v1/" + verb},
      .details = fmt::format(
          "A range of more than {} slots is a dry run unless --yes is given (exit 0; the output "
          "says how to confirm). Exit 1 when the server skipped slots it could not {}.",
          kConfirmAbove, verb),
      .run = [verb](Context& ctx, const Args& args) { return run_range(ctx, args, verb); }};
}

}  // namespace

std::vector<CommandSpec> change_commands() {
  return {
      range_command("rerun", "rerun slot T of W, or the slots of a range (backfill)"),
      range_command("kill", "kill slot T of W, or the slots of a range"),
      {.name = "pause",
       .synopsis = "W",
       .summary = "pause workflow W: steps skip it",
       .min_args = 1,
       .max_args = 1,
       .routes = {"POST /api/v1/pause"},
       .run = [](Context& ctx, const Args& a) { return run_pause(ctx, a.positional[0], true); }},
      {.name = "unpause",
       .synopsis = "W",
       .summary = "unpause workflow W",
       .min_args = 1,
       .max_args = 1,
       .routes = {"POST /api/v1/pause"},
       .run = [](Context& ctx, const Args& a) { return run_pause(ctx, a.positional[0], false); }},
      {.name = "step",
       .synopsis = "[T] [--ids W,...]",
       .summary = "run one scheduler step now, or at time T",
       .options = {{"--ids", "W,...", "only these workflows"}},
       .max_args = 1,
       .routes = {"POST /api/v1/scheduler"},
       .run = run_step},
      {.name = "reload",
       .summary = "re-read the workflow files now",
       .routes = {"POST /api/v1/clear-cache"},
       .run = run_reload},
  };
}

}  // namespace celos::cli
