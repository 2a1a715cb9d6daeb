// Commands that run here rather than on a server: simulate (a scenario over simulated time)
// and plan (what a new version of a workflow set changes). Both live in libcelos/src/sim;
// celos/simulate.h is their API.
#include <fmt/format.h>

#include "celos/simulate.h"
#include "cli/command.h"
#include "cli/parse.h"

namespace celos::cli {
namespace {

// Exit 1 when an expectation failed (as a server error does), 2 for a bad scenario.
Outcome run_simulate(Context& ctx, const Args& args) {
  SimulateOptions options;
  options.scenario = args.positional[0];
  options.json = ctx.globals.json;
  if (const std::string* until = args.value("--until")) {
    auto t = parse_input_time(*until, ctx.globals, "--until");
    if (!t) return tl::unexpected(t.error());
    options.until = *t;
  }
  if (const std::string* only = args.value("--only")) options.only = *only;
  if (const std::string* timeline = args.value("--timeline")) options.timeline = *timeline;
  auto passed = simulate(options, ctx.out, ctx.err);
  if (!passed) return tl::unexpected(passed.error());
  if (!*passed) return fail("expectations failed (above)");
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
  };
}

}  // namespace celos::cli
