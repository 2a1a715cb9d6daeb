// Commands about deadlines (issue 27, docs/deadlines.md): the list of deadlines and their
// states, and moving one slot's deadline.
#include <fmt/format.h>

#include "celos/clock.h"
#include "celos/time.h"
#include "cli/command.h"
#include "cli/format.h"
#include "cli/parse.h"
#include "cli/remote.h"

namespace celos::cli {
namespace {

Color state_color(const std::string& state) {
  if (state == "MISSED") return Color::kRed;
  if (state == "AT_RISK") return Color::kYellow;
  if (state == "MET") return Color::kGreen;
  return Color::kGray;
}

Outcome run_deadlines(Context& ctx, const Args& args) {
  const auto now = std::chrono::floor<std::chrono::seconds>(ctx.clock.now());
  Params params{{"start", format_time(now - std::chrono::hours(24))},
                {"end", format_time(now + std::chrono::hours(24))}};
  Params range;
  if (auto r = add_range(ctx, args, range); !r) return r;
  for (auto& [name, value] : range) {
    for (auto& p : params) {
      if (p.first == name) p.second = value;
    }
  }
  if (const std::string* state = args.value("--state")) params.emplace_back("state", *state);
  auto answer = get(ctx, "/api/v1/deadlines", params);
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  Table table({"DEADLINE", "STATE", "WORKFLOW", "SLOT", "PREDICTED", "REASON"});
  for (const auto& d : array_of(answer->value, "deadlines")) {
    const std::string state = text_of(d, "state");
    const std::string predicted = text_of(d, "predictedFinish");
    table.add({{show_time(ctx.globals, text_of(d, "deadline"))},
               {state, state_color(state)},
               {text_of(d, "workflow")},
               {show_time(ctx.globals, text_of(d, "time"))},
               {predicted.empty() ? "" : show_time(ctx.globals, predicted)},
               {text_of(d, "reason")}});
  }
  if (table.empty()) ctx.out << "no deadlines in the range\n";
  if (!table.empty()) table.print(ctx.out, ctx.color);
  return {};
}

Outcome run_deadline(Context& ctx, const Args& args) {
  auto params = slot_params(ctx, args.positional[0], args.positional[1]);
  if (!params) return tl::unexpected(params.error());
  auto deadline = server_time(args.positional[2], ctx.globals, "DEADLINE");
  if (!deadline) return tl::unexpected(deadline.error());
  params->emplace_back("deadline", *deadline);
  auto answer = post(ctx, "/api/v1/deadline", *params);
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  ctx.out << fmt::format("{} {}: deadline {}\n", args.positional[0],
                         show_time(ctx.globals, text_of(answer->value, "time")),
                         show_time(ctx.globals, text_of(answer->value, "deadline")));
  return {};
}

}  // namespace

std::vector<CommandSpec> deadline_commands() {
  return {
      {.name = "deadlines",
       .synopsis = "[--from T] [--to T] [--state S1,S2]",
       .summary = "slots by deadline with their state (default: deadlines within a day of now)",
       .options = {{"--from", "T", "first deadline (inclusive)"},
                   {"--to", "T", "end (exclusive; at most 7 days after --from)"},
                   {"--state", "S", "only PENDING, AT_RISK, MET or MISSED (comma-separated)"}},
       .routes = {"GET /api/v1/deadlines"},
       .run = run_deadlines},
      {.name = "deadline",
       .synopsis = "W T DEADLINE",
       .summary = "move the deadline of slot T of W to DEADLINE (audited)",
       .min_args = 3,
       .max_args = 3,
       .routes = {"POST /api/v1/deadline"},
       .run = run_deadline},
  };
}

}  // namespace celos::cli
