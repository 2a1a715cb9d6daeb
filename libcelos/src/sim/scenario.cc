// Reading a scenario file: JSON (comments and trailing commas allowed), each section through
// Fields so that a wrong or unknown key is named with its place.
#include "sim/scenario.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fnmatch.h>

#include "sim/scenario_fields.h"

namespace celos::sim {
namespace {

namespace json = boost::json;

#define SIM_TRY(var, expr) \
  auto var = (expr);       \
  if (!var) return tl::unexpected(var.error())

// Reads every element of the list under `key` into `into` with `read`, as Fields named `key[i]`.
template <class Spec, class Read>
Result<void> each_entry(Fields& top, const std::string& key, std::vector<Spec>& into, Read read) {
  SIM_TRY(items, top.list(key));
  for (std::size_t i = 0; i < items->size(); ++i) {
    SIM_TRY(entry, Fields::of(*(*items)[i], fmt::format("{}[{}]", key, i)));
    SIM_TRY(done, read(*entry, into.emplace_back()));
    SIM_TRY(rest, entry->no_other_keys());
  }
  return {};
}

// Exactly one of the keys of `choices` is given (read with `read`): its tag and its value. The
// error names `place`.
template <class Tag, class Value, std::size_t N>
Result<std::pair<Tag, Value>> one_key(
    Fields& f, const std::pair<const char*, Tag> (&choices)[N],
    Result<std::optional<Value>> (Fields::*read)(const std::string&), const std::string& place) {
  std::optional<std::pair<Tag, Value>> found;
  std::string names;
  int given = 0;
  for (const auto& [key, tag] : choices) {
    names += (names.empty() ? "" : ", ") + std::string(key);
    SIM_TRY(value, (f.*read)(key));
    if (!*value) continue;
    ++given;
    found.emplace(tag, **value);
  }
  if (given != 1) return f.error(place, "give exactly one of " + names);
  return *found;
}

Result<void> read_series(Fields& f, const Scenario& s, DataSpec& d) {
  SIM_TRY(every, f.duration("every"));
  SIM_TRY(from, f.time("from"));
  SIM_TRY(to, f.time("to"));
  SIM_TRY(times, f.times("times"));
  SIM_TRY(at, f.time("at"));
  d.times = std::move(*times);
  if (*at) d.times.push_back(**at);
  if (*every) {
    if (**every <= Seconds(0)) return f.error("every", "must be more than 0 seconds");
    for (Time t = from->value_or(s.start); t < to->value_or(s.end); t += **every) {
      d.times.push_back(t);
    }
  } else if (*from || *to) {
    return f.error(*from ? "from" : "to", "needs \"every\"");
  }
  if (d.times.empty()) return f.error("times", "no instances: give \"every\", \"times\" or \"at\"");
  std::sort(d.times.begin(), d.times.end());
  d.times.erase(std::unique(d.times.begin(), d.times.end()), d.times.end());
  return {};
}

Result<void> read_data(Fields& f, const Scenario& s, DataSpec& d) {
  d.field = f.path();
  SIM_TRY(what, f.either("path", "dataset"));
  d.path = what->first;
  d.dataset = what->second;
  SIM_TRY(announce, f.boolean("announce"));
  d.announce = announce->value_or(false);
  if (d.announce && d.dataset.empty()) return f.error("announce", "needs \"dataset\"");
  SIM_TRY(series, read_series(f, s, d));
  SIM_TRY(delay, f.duration("delay"));
  d.delay = delay->value_or(Seconds(0));
  SIM_TRY(never, f.times("never"));
  d.never.insert(never->begin(), never->end());
  SIM_TRY(late, f.object("late"));
  if (*late) {
    for (const auto& entry : **late) {
      const std::string key = fmt::format("late.{}", std::string(entry.key()));
      auto t = parse_time(std::string(entry.key()));
      if (!t) return f.error(key, t.error().message);
      const json::value wrapped = {{"by", entry.value()}};  // Fields reads it in place
      SIM_TRY(one, Fields::of(wrapped, f.name(key)));
      SIM_TRY(by, one->duration("by"));
      if (!*by) return f.error(key, "must be a duration");
      d.late[*t] = **by;
    }
  }
  return {};
}

Result<void> read_job(Fields& f, JobSpec& j) {
  j.field = f.path();
  SIM_TRY(workflow, f.text("workflow"));
  j.workflow = workflow->value_or("*");
  SIM_TRY(duration, f.duration("duration"));
  j.duration = duration->value_or(Seconds(0));
  SIM_TRY(attempts, f.list("failOnAttempt"));
  for (const json::value* v : *attempts) {
    if (!v->is_int64() || v->get_int64() < 1) {
      return f.error("failOnAttempt", "must be attempt numbers from 1 on");
    }
    j.fail_on_attempt.insert(int(v->get_int64()));
  }
  SIM_TRY(fail_at, f.times("failAt"));
  j.fail_at.insert(fail_at->begin(), fail_at->end());
  SIM_TRY(rate, f.number("failureRate"));
  j.failure_rate = rate->value_or(0);
  if (j.failure_rate < 0 || j.failure_rate > 1) return f.error("failureRate", "must be in [0, 1]");
  SIM_TRY(seed, f.integer("seed"));
  j.seed = std::uint64_t(seed->value_or(0));
  return {};
}

Result<void> read_operator(Fields& f, OperatorSpec& o) {
  o.field = f.path();
  SIM_TRY(at, f.required_time("at"));
  o.at = *at;
  const std::pair<const char*, OperatorAction> actions[] = {
      {"rerun", OperatorAction::kRerun},
      {"kill", OperatorAction::kKill},
      {"pause", OperatorAction::kPause},
      {"resume", OperatorAction::kResume},
      {"maintenance", OperatorAction::kMaintenance}};
  SIM_TRY(chosen, one_key(f, actions, &Fields::text, "at"));
  o.action = chosen->first;
  o.workflow = chosen->second;
  SIM_TRY(reason, f.text("reason"));
  o.reason = reason->value_or("");
  if (o.action == OperatorAction::kMaintenance) {
    auto mode = parse_maintenance_mode(o.workflow);
    if (!mode) return f.error("maintenance", "must be off, drain or pause");
    o.mode = *mode;
    o.workflow.clear();
  }
  if (o.action == OperatorAction::kRerun || o.action == OperatorAction::kKill) {
    SIM_TRY(slot, f.required_time("slot"));
    o.slot = *slot;
  }
  return {};
}

Result<void> read_outage(Fields& f, OutageSpec& o) {
  o.field = f.path();
  SIM_TRY(what, f.either("service", "fileSystem"));
  o.service = what->first;
  o.file_system = what->second;
  SIM_TRY(from, f.required_time("from"));
  SIM_TRY(to, f.required_time("to"));
  o.from = *from;
  o.to = *to;
  if (o.to <= o.from) return f.error("to", "must be after \"from\"");
  return {};
}

Result<void> read_count(Fields& f, ExpectSpec& e) {
  e.kind = ExpectKind::kCount;
  const std::pair<const char*, Compare> compares[] = {
      {"equals", Compare::kEqual}, {"atLeast", Compare::kAtLeast}, {"atMost", Compare::kAtMost}};
  SIM_TRY(chosen, one_key(f, compares, &Fields::integer, "count"));
  e.compare = chosen->first;
  e.count = chosen->second;
  SIM_TRY(from, f.time("from"));
  SIM_TRY(to, f.time("to"));
  e.from = *from;
  e.to = *to;
  return {};
}

Result<void> read_expect(Fields& f, ExpectSpec& e) {
  e.field = f.path();
  SIM_TRY(workflow, f.text("workflow"));
  SIM_TRY(count, f.text("count"));
  SIM_TRY(no_failure, f.text("noFailure"));
  const int kinds =
      int(workflow->has_value()) + int(count->has_value()) + int(no_failure->has_value());
  if (kinds != 1) return f.error("workflow", "give exactly one of workflow, count, noFailure");
  SIM_TRY(at, f.time("at"));
  e.at = *at;
  SIM_TRY(state, f.status("state"));
  if (*no_failure) {
    e.kind = ExpectKind::kNoFailure;
    e.workflow = **no_failure;
    return {};
  }
  if (!*state) return f.error("state", "is required");
  e.state = **state;
  if (*count) {
    e.workflow = **count;
    return read_count(f, e);
  }
  e.kind = ExpectKind::kState;
  e.workflow = **workflow;
  SIM_TRY(slot, f.required_time("slot"));
  e.slot = *slot;
  return {};
}

std::string resolve_dir(const std::string& base_dir, const std::string& dir) {
  const std::filesystem::path p(dir);
  return p.is_absolute() ? dir : (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

Result<void> read_top(Fields& f, Scenario& s, const std::string& base_dir) {
  SIM_TRY(workflows, f.required_text("workflows"));
  SIM_TRY(defaults, f.text("defaults"));
  s.workflows_dir = resolve_dir(base_dir, *workflows);
  s.defaults_dir = defaults->has_value() ? resolve_dir(base_dir, **defaults) : "";
  SIM_TRY(substitute, f.object("substitute"));
  if (*substitute) {
    for (const auto& entry : **substitute) {
      if (!entry.value().is_string()) {
        return f.error("substitute." + std::string(entry.key()), "must be a string");
      }
      s.substitute[std::string(entry.key())] = std::string(entry.value().get_string());
    }
  }
  SIM_TRY(start, f.required_time("start"));
  SIM_TRY(end, f.required_time("end"));
  s.start = *start;
  s.end = *end;
  if (s.end <= s.start) return f.error("end", "must be after \"start\"");
  SIM_TRY(step, f.duration("step"));
  s.step = step->value_or(Seconds(60));
  if (s.step <= Seconds(0)) return f.error("step", "must be more than 0 seconds");
  return {};
}

Result<Scenario> read_scenario(const json::value& root, const std::string& base_dir) {
  SIM_TRY(top, Fields::of(root, ""));
  Scenario s;
  SIM_TRY(head, read_top(*top, s, base_dir));
  const auto data = [&s](Fields& f, DataSpec& d) { return read_data(f, s, d); };
  SIM_TRY(sections,
          each_entry(*top, "data", s.data, data)
              .and_then([&] { return each_entry(*top, "jobs", s.jobs, read_job); })
              .and_then([&] { return each_entry(*top, "operators", s.operators, read_operator); })
              .and_then([&] { return each_entry(*top, "outages", s.outages, read_outage); })
              .and_then([&] { return each_entry(*top, "expect", s.expect, read_expect); }));
  SIM_TRY(rest, top->no_other_keys());
  return s;
}

// "line L, column C" of a byte offset.
std::string position(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const auto line = 1 + std::count(text.begin(), text.begin() + std::ptrdiff_t(offset), '\n');
  const std::size_t line_start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  const std::size_t column =
      offset - (line_start == std::string::npos || offset == 0 ? 0 : line_start + 1) + 1;
  return fmt::format("line {}, column {}", line, column);
}

}  // namespace

Result<Scenario> parse_scenario(const std::string& text, const std::string& file,
                                const std::string& base_dir) {
  json::parse_options options;
  options.allow_comments = true;
  options.allow_trailing_commas = true;
  json::stream_parser parser({}, options);
  boost::system::error_code ec;
  const std::size_t used = parser.write_some(text.data(), text.size(), ec);
  if (!ec) parser.finish(ec);
  if (ec) {
    return fail(fmt::format("{}: {}: not valid JSON: {}", file, position(text, used), ec.message()),
                ErrorCode::kInvalid);
  }
  auto scenario = read_scenario(parser.release(), base_dir);
  if (!scenario) {
    return fail(fmt::format("{}: {}", file, scenario.error().message), ErrorCode::kInvalid);
  }
  scenario->file = file;
  return scenario;
}

Result<Scenario> load_scenario(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(fmt::format("{}: cannot read the scenario file", path), ErrorCode::kInvalid);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string base = std::filesystem::path(path).parent_path().string();
  return parse_scenario(text.str(), path, base.empty() ? "." : base);
}

Result<Seconds> parse_duration(const std::string& text) {
  const auto bad = [&] {
    return fail(
        fmt::format("\"{}\" is not a duration (seconds, or such as 90s, 10m, 2h, 1d, 1h30m)", text),
        ErrorCode::kInvalid);
  };
  if (text.empty()) return bad();
  Seconds total{0};
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j == i || j - i > 9) return bad();
    const std::int64_t n = std::stoll(text.substr(i, j - i));
    if (j == text.size()) {
      if (i != 0) return bad();  // "1h30" is ambiguous
      return Seconds(n);
    }
    const char unit = text[j];
    const std::int64_t scale = unit == 's'   ? 1
                               : unit == 'm' ? 60
                               : unit == 'h' ? 3600
                               : unit == 'd' ? 86400
                                             : 0;
    if (scale == 0) return bad();
    total += Seconds(n * scale);
    i = j + 1;
  }
  return total;
}

bool glob_match(const std::string& pattern, const std::string& name) {
  return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

}  // namespace celos::sim
