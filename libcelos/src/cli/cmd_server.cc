// Commands about the server and the cluster: maintenance, cluster, step-down, audit, health,
// version, openapi, docs.
#include <fmt/format.h>

#include "celos/version.h"
#include "cli/command.h"
#include "cli/format.h"
#include "cli/parse.h"
#include "cli/remote.h"

namespace celos::cli {
namespace {

namespace json = boost::json;

constexpr auto kMaintenancePoll = std::chrono::seconds(1);

void print_maintenance(const Context& ctx, const json::value& m) {
  const std::string mode = text_of(m, "mode"), reason = text_of(m, "reason");
  const Color color = mode == "off" ? Color::kGreen : Color::kYellow;
  ctx.out << "maintenance: " << paint(ctx.color, color, mode);
  if (!reason.empty()) ctx.out << " (" << reason << ")";
  if (!text_of(m, "since").empty())
    ctx.out << " since " << show_time(ctx.globals, text_of(m, "since"));
  ctx.out << fmt::format("; running slots: {}\n", int_of(m, "running"));
}

// Polls until no slot runs (as of the server's last step); the last answer.
Result<Answer> wait_idle(Context& ctx, Answer answer) {
  std::int64_t said = -1;
  while (int_of(answer.value, "running") > 0) {
    const std::int64_t running = int_of(answer.value, "running");
    if (running != said) ctx.err << fmt::format("waiting: {} slots running\n", running);
    said = running;
    ctx.clock.sleep_for(kMaintenancePoll);
    auto next = get(ctx, "/api/v1/maintenance");
    if (!next) return next;
    answer = std::move(*next);
  }
  return answer;
}

Outcome run_maintenance(Context& ctx, const Args& args) {
  Result<Answer> answer;
  if (args.positional.empty()) {
    if (args.value("--reason")) return usage_error("--reason needs a mode: drain, pause or off");
    answer = get(ctx, "/api/v1/maintenance");
  } else {
    const std::string& mode = args.positional[0];
    if (mode != "drain" && mode != "pause" && mode != "off") {
      return usage_error(fmt::format("unknown mode \"{}\": drain, pause or off", mode));
    }
    Params params{{"mode", mode}};
    if (const std::string* reason = args.value("--reason")) params.emplace_back("reason", *reason);
    answer = post(ctx, "/api/v1/maintenance", params);
  }
  if (answer && args.has("--wait")) answer = wait_idle(ctx, std::move(*answer));
  if (!answer) return tl::unexpected(answer.error());
  if (!print_raw(ctx, *answer)) print_maintenance(ctx, answer->value);
  return {};
}

Outcome run_cluster(Context& ctx, const Args&) {
  auto answer = get(ctx, "/api/v1/cluster");
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  const json::value& v = answer->value;
  const json::object* o = v.if_object();
  const json::value* leader = o ? o->if_contains("leader") : nullptr;
  ctx.out << "cluster " << text_of(v, "name") << ": ";
  if (leader == nullptr || leader->is_null()) {
    ctx.out << paint(ctx.color, Color::kRed, "no leader") << '\n';
  } else {
    ctx.out << fmt::format("leader {} ({}), epoch {}, since {}\n", text_of(*leader, "id"),
                           text_of(*leader, "url"), int_of(*leader, "epoch"),
                           show_time(ctx.globals, text_of(*leader, "since")));
  }
  const std::string self = o && o->contains("self") ? text_of(o->at("self"), "id") : "";
  Table table({"NODE", "ROLE", "URL", "LAST SEEN"});
  for (const auto& n : array_of(v, "nodes")) {
    const std::string id = text_of(n, "id"), role = text_of(n, "role");
    table.add({{id == self ? id + " (this node)" : id},
               {role, role == "leader" ? Color::kGreen : Color::kNone},
               {text_of(n, "url")},
               {show_time(ctx.globals, text_of(n, "lastSeen"))}});
  }
  table.print(ctx.out, ctx.color);
  return {};
}

Outcome run_step_down(Context& ctx, const Args& args) {
  Params params;
  if (const std::string* seconds = args.value("--seconds"))
    params.emplace_back("seconds", *seconds);
  auto answer = post(ctx, "/api/v1/cluster/step-down", params);
  if (!answer) return tl::unexpected(answer.error());
  if (!print_raw(ctx, *answer)) {
    ctx.out << "stepped down; not campaigning until "
            << show_time(ctx.globals, text_of(answer->value, "until")) << '\n';
  }
  return {};
}

Outcome run_audit(Context& ctx, const Args& args) {
  Params params;
  if (const std::string* since = args.value("--since")) {
    auto t = server_time(*since, ctx.globals, "--since");
    if (!t) return tl::unexpected(t.error());
    params.emplace_back("since", *t);
  }
  if (const std::string* limit = args.value("--limit")) params.emplace_back("limit", *limit);
  auto answer = get(ctx, "/api/v1/audit", params);
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  Table table({"TIME", "STATUS", "METHOD", "PATH", "QUERY", "TOKEN", "CLIENT", "NODE"});
  for (const auto& r : array_of(answer->value, "records")) {
    const std::int64_t status = int_of(r, "status");
    table.add({{show_time(ctx.globals, text_of(r, "time"))},
               {std::to_string(status), status >= 400 ? Color::kRed : Color::kNone},
               {text_of(r, "method")},
               {text_of(r, "path")},
               {text_of(r, "query")},
               {text_of(r, "token")},
               {text_of(r, "client")},
               {text_of(r, "node")}});
  }
  table.print(ctx.out, ctx.color);
  return {};
}

// /health/ready answers 503 with its checks when not ready: shown, and exit 1.
Outcome run_health(Context& ctx, const Args&) {
  auto answer = call_any(ctx, "GET", "/health/ready");
  if (!answer) return tl::unexpected(answer.error());
  if (!print_raw(ctx, *answer)) {
    const std::string status = text_of(answer->value, "status");
    ctx.out << paint(ctx.color, status == "ok" ? Color::kGreen : Color::kRed, status) << " ("
            << text_of(answer->value, "role") << ")\n";
    Table table({"CHECK", "STATE"});
    const json::object* o = answer->value.if_object();
    const json::value* checks = o ? o->if_contains("checks") : nullptr;
    if (checks && checks->is_object()) {
      for (const auto& [name, state] : checks->get_object()) {
        const std::string text =
            state.is_string() ? std::string(state.get_string()) : json::serialize(state);
        table.add({{std::string(name)}, {text, text == "ok" ? Color::kGreen : Color::kYellow}});
      }
    }
    table.print(ctx.out, ctx.color);
  }
  if (answer->status == 503) return fail("celos-server is not ready");
  if (auto ok = checked(std::move(answer)); !ok) return tl::unexpected(ok.error());
  return {};
}

Outcome run_version(Context& ctx, const Args&) {
  auto answer = get(ctx, "/api/v1/version");
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  ctx.out << fmt::format("celos {}\ncelos-server {} at {}\n", kVersion,
                         text_of(answer->value, "version"), ctx.globals.server);
  return {};
}

// The OpenAPI document is JSON for people too.
Outcome run_openapi(Context& ctx, const Args&) {
  auto answer = get(ctx, "/api/v1/openapi.json");
  if (!answer) return tl::unexpected(answer.error());
  ctx.out << answer->body << '\n';
  return {};
}

Outcome run_docs(Context& ctx, const Args& args) {
  const std::string path =
      "/api/v1/docs" + (args.positional.empty() ? "" : "/" + url_encode(args.positional[0]));
  auto answer = get(ctx, path);
  if (!answer) return tl::unexpected(answer.error());
  if (args.positional.empty())
    ctx.out << "the API's documentation: " << ctx.globals.server << path << '\n';
  else
    ctx.out << answer->body;
  return {};
}

}  // namespace

std::vector<CommandSpec> server_commands() {
  return {
      {.name = "maintenance",
       .synopsis = "[drain|pause|off] [--reason R] [--wait]",
       .summary = "show or set the maintenance mode (drain before a restart)",
       .options = {{"--reason", "R", "why (shown by the UI)"},
                   {"--wait", "", "return when no slot runs (as of the server's last step)"}},
       .max_args = 1,
       .routes = {"GET /api/v1/maintenance", "POST /api/v1/maintenance"},
       .details = "drain: submit nothing new, follow running slots; pause: no steps at all; "
                  "off: back to normal.",
       .run = run_maintenance},
      {.name = "cluster",
       .summary = "the cluster's nodes, leader and lease",
       .routes = {"GET /api/v1/cluster"},
       .run = run_cluster},
      {.name = "step-down",
       .synopsis = "[--seconds S]",
       .summary = "the leader gives up its lease and does not campaign for S seconds",
       .options = {{"--seconds", "S", "0-86400 (default 30)"}},
       .routes = {"POST /api/v1/cluster/step-down"},
       .run = run_step_down},
      {.name = "audit",
       .synopsis = "[--since T] [--limit N]",
       .summary = "the audit trail of mutating requests, newest first",
       .options = {{"--since", "T", "only records at or after T"},
                   {"--limit", "N", "at most N records (1-1000, default 100)"}},
       .routes = {"GET /api/v1/audit"},
       .run = run_audit},
      {.name = "health",
       .summary = "is the server ready, and its checks (exit 1 when not ready)",
       .routes = {"GET /health/ready"},
       .run = run_health},
      {.name = "version",
       .summary = "the versions of this tool and of the server",
       .routes = {"GET /api/v1/version"},
       .run = run_version},
      {.name = "openapi",
       .summary = "the server's OpenAPI document (JSON)",
       .routes = {"GET /api/v1/openapi.json"},
       .run = run_openapi},
      {.name = "docs",
       .synopsis = "[ASSET]",
       .summary = "the URL of the API's documentation page, or one of its assets",
       .max_args = 1,
       .routes = {"GET /api/v1/docs", "GET /api/v1/docs/{asset}"},
       .run = run_docs},
  };
}

}  // namespace celos::cli
