// Commands about data (SPEC §14): datasets, instances, announce, lineage; and preview, a
// schedule's coming slot times in its own zone (issue 26).
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/format.h"
#include "cli/parse.h"
#include "cli/remote.h"

namespace celos::cli {
namespace {

namespace json = boost::json;

std::string joined(const json::array& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ",";
    out += item.is_string() ? std::string(item.get_string()) : json::serialize(item);
  }
  return out;
}

std::string instances_path(const std::string& dataset) {
  return "/api/v1/datasets/" + url_encode(dataset) + "/instances";
}

Cell yes_no(bool value, Color no_color = Color::kRed) {
  return value ? Cell{"yes", Color::kGreen} : Cell{"no", no_color};
}

Outcome run_datasets(Context& ctx, const Args&) {
  auto answer = get(ctx, "/api/v1/datasets");
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  Table table({"DATASET", "PATH", "FS", "DONE FLAG", "PRODUCERS", "CONSUMERS"});
  for (const auto& d : array_of(answer->value, "datasets")) {
    table.add({{text_of(d, "id")},
               {text_of(d, "path")},
               {text_of(d, "fs")},
               {text_of(d, "doneFlag")},
               {joined(array_of(d, "producers"))},
               {joined(array_of(d, "consumers"))}});
  }
  table.print(ctx.out, ctx.color);
  return {};
}

Outcome run_instances(Context& ctx, const Args& args) {
  Params params;
  if (auto r = add_range(ctx, args, params); !r) return r;
  if (const std::string* limit = args.value("--limit")) params.emplace_back("limit", *limit);
  auto answer = get(ctx, instances_path(args.positional[0]), params);
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  Table table({"INSTANCE", "PRESENT", "ANNOUNCED", "PATH"});
  for (const auto& i : array_of(answer->value, "instances")) {
    table.add({{show_time(ctx.globals, text_of(i, "time"))},
               yes_no(bool_of(i, "present"), Color::kGray),
               {bool_of(i, "announced") ? "yes" : ""},
               {text_of(i, "path")}});
  }
  table.print(ctx.out, ctx.color);
  if (bool_of(answer->value, "truncated")) {
    ctx.out << fmt::format("more instances: add --to {}\n", text_of(answer->value, "next"));
  }
  return {};
}

Outcome run_announce(Context& ctx, const Args& args) {
  auto t = server_time(args.positional[1], ctx.globals, "T");
  if (!t) return tl::unexpected(t.error());
  auto answer = post(ctx, instances_path(args.positional[0]), {{"time", *t}});
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  ctx.out << fmt::format("{} {} is present\n", text_of(answer->value, "dataset"),
                         show_time(ctx.globals, text_of(answer->value, "time")));
  return {};
}

std::string slot_text(const Context& ctx, const json::value& slot) {
  if (slot.is_null()) return "";
  return fmt::format("{} {} {}", text_of(slot, "workflow"),
                     show_time(ctx.globals, text_of(slot, "time")), text_of(slot, "status"));
}

void print_inputs(const Context& ctx, const json::array& inputs) {
  Table table({"INPUT", "INSTANCE", "PRESENT", "PRODUCER", "PATH"});
  for (const auto& i : inputs) {
    const json::object* o = i.if_object();
    const json::value* producer = o ? o->if_contains("producer") : nullptr;
    table.add({{text_of(i, "dataset")},
               {show_time(ctx.globals, text_of(i, "time"))},
               yes_no(bool_of(i, "present")),
               {producer ? slot_text(ctx, *producer) : ""},
               {text_of(i, "path")}});
  }
  if (!table.empty()) table.print(ctx.out, ctx.color);
}

void print_outputs(const Context& ctx, const json::array& outputs) {
  Table table({"OUTPUT", "INSTANCE", "EXISTS", "COMPLETE", "CONSUMERS", "PATH"});
  for (const auto& o : outputs) {
    std::string consumers;
    for (const auto& c : array_of(o, "consumers")) {
      consumers += (consumers.empty() ? "" : ", ") + slot_text(ctx, c);
    }
    table.add({{text_of(o, "dataset")},
               {show_time(ctx.globals, text_of(o, "time"))},
               yes_no(bool_of(o, "exists"), Color::kGray),
               yes_no(bool_of(o, "complete"), Color::kGray),
               {consumers},
               {text_of(o, "path")}});
  }
  if (!table.empty()) table.print(ctx.out, ctx.color);
}

Outcome run_lineage(Context& ctx, const Args& args) {
  auto params = slot_params(ctx, args.positional[0], args.positional[1]);
  if (!params) return tl::unexpected(params.error());
  auto answer = get(ctx, "/api/v1/lineage", *params);
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  const json::array& inputs = array_of(answer->value, "inputs");
  const json::array& outputs = array_of(answer->value, "outputs");
  if (inputs.empty() && outputs.empty()) ctx.out << "no datasets read or written\n";
  print_inputs(ctx, inputs);
  if (!inputs.empty() && !outputs.empty()) ctx.out << '\n';
  print_outputs(ctx, outputs);
  return {};
}

// The slots of a schedule with their local times: what a zoned workflow will do before it runs.
Outcome run_preview(Context& ctx, const Args& args) {
  Params params{{"id", args.positional[0]}};
  if (auto r = add_range(ctx, args, params); !r) return r;
  auto answer = get(ctx, "/api/v1/schedule-preview", params);
  if (!answer) return tl::unexpected(answer.error());
  if (print_raw(ctx, *answer)) return {};
  ctx.out << fmt::format("time zone {} (tzdata {})\n", text_of(answer->value, "timeZone"),
                         text_of(answer->value, "tzdata"));
  Table table({"SLOT", "LOCAL", "DST RULE"});
  for (const auto& s : array_of(answer->value, "slots")) {
    table.add({{show_time(ctx.globals, text_of(s, "time"))},
               {text_of(s, "local")},
               {text_of(s, "rule"), Color::kYellow}});
  }
  table.print(ctx.out, ctx.color);
  for (const auto& w : array_of(answer->value, "warnings")) {
    ctx.err << "warning: " << (w.is_string() ? std::string(w.get_string()) : "") << "\n";
  }
  return {};
}

}  // namespace

std::vector<CommandSpec> data_commands() {
  return {
      {.name = "datasets",
       .summary = "the datasets, their producers and consumers",
       .routes = {"GET /api/v1/datasets"},
       .run = run_datasets},
      {.name = "instances",
       .synopsis = "DATASET [--from T] [--to T] [--limit N]",
       .summary = "the instances of a dataset, newest first (default: the last 7 days)",
       .options = {{"--from", "T", "first instance time (inclusive)"},
                   {"--to", "T", "end (exclusive)"},
                   {"--limit", "N", "at most N instances (1-10000, default 1000)"}},
       .min_args = 1,
       .max_args = 1,
       .routes = {"GET /api/v1/datasets/{id}/instances"},
       .run = run_instances},
      {.name = "announce",
       .synopsis = "DATASET T",
       .summary = "record that instance T of DATASET is present (an external producer)",
       .min_args = 2,
       .max_args = 2,
       .routes = {"POST /api/v1/datasets/{id}/instances"},
       .run = run_announce},
      {.name = "lineage",
       .synopsis = "W T",
       .summary = "what slot T of W read and wrote, with producers and consumers",
       .min_args = 2,
       .max_args = 2,
       .routes = {"GET /api/v1/lineage"},
       .run = run_lineage},
      {.name = "preview",
       .synopsis = "W [--from T] [--to T]",
       .summary = "the slot times of W's schedule with their local times and DST rules "
                  "(default: the next 7 days)",
       .options = {{"--from", "T", "start (default: now)"},
                   {"--to", "T", "end, exclusive (default: start + 7 days; at most 10,000 slots)"}},
       .min_args = 1,
       .max_args = 1,
       .routes = {"GET /api/v1/schedule-preview"},
       .run = run_preview},
  };
}

}  // namespace celos::cli
