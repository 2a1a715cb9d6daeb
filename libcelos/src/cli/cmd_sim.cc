// Commands that run here rather than on a server: simulate (a scenario over simulated time)
// and plan (what a new version of a workflow set changes). Both live in libcelos/src/sim;
// celos/simulate.h is their API.
#include <fmt/format.h>

#include "celos/simulate.h"
#include "cli/command.h"
#include "cli/parse.h"

namespace celos::cli {
namespace {

// The time given with option `name`, if any.
Result<std::optional<Time>> time_option(const Context& ctx, const Args& args,
                                        std::string_view name) {
  const std::string* text = args.value(name);
  if (text == nullptr) return std::nullopt;
  auto t = parse_input_time(*text, ctx.globals, name);
  if (!t) return tl::unexpected(t.error());
  return *t;
}

// Exit 1 when an expectation failed (as a server error does), 2 for a bad scenario.
Outcome run_simulate(Context& ctx, const Args& args) {
  SimulateOptions options;
  options.scenario = args.positional[0];
  options.json = ctx.globals.json;
  auto until = time_option(ctx, args, "--until");
  if (!until) return tl::unexpected(until.error());
  options.until = *until;
  if (const std::string* only = args.value("--only")) options.only = *only;
  if (const std::string* timeline = args.value("--timeline")) options.timeline = *timeline;
  auto passed = simulate(options, ctx.out, ctx.err);
  if (!passed) return tl::unexpected(passed.error());
  if (!*passed) return fail("expectations failed (above)");
  return {};
}

Outcome run_plan(Context& ctx, const Args& args) {
  PlanOptions options;
  const std::string* from = args.value("--from");
  const std::string* to = args.value("--to");
  if (from == nullptr || to == nullptr) return usage_error("--from and --to are required");
  options.from_dir = *from;
  options.to_dir = *to;
  options.json = ctx.globals.json;
  auto at = time_option(ctx, args, "--at");
  if (!at) return tl::unexpected(at.error());
  options.now = at->value_or(ctx.clock.now());
  if (const std::string* days = args.value("--days")) {
    char* end = nullptr;
    const long n = std::strtol(days->c_str(), &end, 10);
    if (end == days->c_str() || *end != '\0' || n < 1 || n > 366) {
      return usage_error(fmt::format("--days: a whole number from 1 to 366, not \"{}\"", *days));
    }
    options.days = int(n);
  }
  auto changed = plan(options, ctx.out, ctx.err);
  if (!changed) return tl::unexpected(changed.error());
  return {};
}

}  // namespace

std::vector<CommandSpec> local_commands() {
  return {
      CommandSpec{
          .name = "simulate",
          .synopsis = "SCENARIO [--until T] [--only W] [--timeline FILE]",
          .summary = "run a workflow set over simulated time, as a scenario scripts it",
          .options = {{"--until", "T", "stop after the last step at or before T"},
                      {"--only", "W", "step only the workflows matching W (a glob)"},
                      {"--timeline", "FILE", "write every slot change as JSON lines (- = stdout)"}},
          .min_args = 1,
          .max_args = 1,
          .details = "Runs the real scheduler step on simulated data, jobs and services, in this "
                     "process, touching nothing real (docs/simulate.md). Exit 1 when an "
                     "expectation of the scenario fails, 2 when the scenario is wrong.",
          .run = run_simulate,
          .local = true},
      CommandSpec{
          .name = "plan",
          .synopsis = "--from DIR --to DIR [--days N] [--at T]",
          .summary = "show which slots a new version of a workflow set adds, removes or moves",
          .options = {{"--from", "DIR", "the deployed version (holds workflows/ and defaults/)"},
                      {"--to", "DIR", "the version about to be deployed"},
                      {"--days", "N", "how many days ahead to compare (default 7)"},
                      {"--at", "T", "compare from T instead of now"}},
          .details = "Also lists the workflows whose trigger, external service, schedule or "
                     "datasets changed. -o json: {\"added\", \"removed\", \"moved\", \"changed\"}.",
          .run = run_plan,
          .local = true},
  };
}

}  // namespace celos::cli
