// celos log W T [--stderr] [--follow]: the tail of a slot's job output, and following it.
//
// The route answers the last `tail` bytes of the output, not an offset, so following finds the
// new bytes as the longest end of the previous answer that starts the new one (an output that
// grows between two polls by less than the tail shows exactly its new bytes; a new job's output,
// e.g. after a rerun, overlaps nothing and is shown whole). Output that repeats the same text at
// exactly the tail's length cannot be told from no output: a limit of the route.
#include <algorithm>
#include <chrono>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/remote.h"

namespace celos::cli {

// The length of the longest suffix of `before` that is a prefix of `now` (Knuth-Morris-Pratt:
// linear, also for output of one repeated character).
std::size_t log_overlap(std::string_view before, std::string_view now) {
  const std::string_view p = now.substr(0, std::min(now.size(), before.size()));
  if (p.empty()) return 0;
  std::vector<std::size_t> border(p.size(), 0);
  for (std::size_t i = 1, k = 0; i < p.size(); ++i) {
    while (k > 0 && p[i] != p[k]) k = border[k - 1];
    if (p[i] == p[k]) ++k;
    border[i] = k;
  }
  std::size_t k = 0;
  for (char c : before) {
    while (k > 0 && (k == p.size() || c != p[k])) k = border[k - 1];
    if (c == p[k]) ++k;
  }
  return k;
}

namespace {

constexpr auto kFollowInterval = std::chrono::milliseconds(500);

bool is_final(std::string_view status) {
  return status == "SUCCESS" || status == "FAILURE" || status == "WAIT_TIMEOUT" ||
         status == "KILLED";
}

Result<Params> log_params(const Context& ctx, const Args& args) {
  auto params = slot_params(ctx, args.positional[0], args.positional[1]);
  if (!params) return params;
  if (args.has("--stderr")) params->emplace_back("stream", "stderr");
  if (const std::string* tail = args.value("--tail")) params->emplace_back("tail", *tail);
  return params;
}

// The slot's status; a slot with nothing stored (404) is WAITING.
Result<std::string> slot_status(const Context& ctx, const Params& slot) {
  auto answer = call_any(ctx, "GET", "/api/v1/slot-state", {slot[0], slot[1]});
  if (answer && answer->status == 404) return std::string("WAITING");
  answer = checked(std::move(answer));
  if (!answer) return tl::unexpected(answer.error());
  return text_of(answer->value, "status");
}

// Polls until the slot is final; prints what is new each time. A 404 of the log (a rerun that
// has no job yet) is no output for now.
Outcome follow(Context& ctx, const Params& params, std::string shown) {
  for (;;) {
    auto status = slot_status(ctx, params);
    if (!status) return tl::unexpected(status.error());
    auto answer = call_any(ctx, "GET", "/api/v1/slot-log", params);
    if (!answer || answer->status != 404) answer = checked(std::move(answer));
    if (!answer) return tl::unexpected(answer.error());
    const std::string now = answer->status == 404 ? "" : answer->body;
    ctx.out << std::string_view(now).substr(log_overlap(shown, now)) << std::flush;
    shown = now;
    if (is_final(*status)) return {};
    ctx.clock.sleep_for(kFollowInterval);
  }
}

Outcome run_log(Context& ctx, const Args& args) {
  auto params = log_params(ctx, args);
  if (!params) return tl::unexpected(params.error());
  auto answer = get(ctx, "/api/v1/slot-log", *params);
  if (!answer) return tl::unexpected(answer.error());
  ctx.out << answer->body << std::flush;  // text: the same for people and -o json
  if (!args.has("--follow")) return {};
  return follow(ctx, *params, answer->body);
}

}  // namespace

CommandSpec log_command() {
  return {.name = "log",
          .synopsis = "W T [--stderr] [--follow] [--tail BYTES]",
          .summary = "the output of slot T's latest job (command, Slurm, Kubernetes)",
          .options = {{"--stderr", "", "stderr instead of stdout"},
                      {"--follow", "", "keep printing new output until the slot ends"},
                      {"--tail", "BYTES", "the last BYTES of the output (default 65536)"}},
          .min_args = 2,
          .max_args = 2,
          .routes = {"GET /api/v1/slot-log", "GET /api/v1/slot-state"},
          .details =
              "--follow polls twice a second and ends when the slot is SUCCESS, FAILURE, "
              "WAIT_TIMEOUT or KILLED.",
          .run = run_log};
}

}  // namespace celos::cli
