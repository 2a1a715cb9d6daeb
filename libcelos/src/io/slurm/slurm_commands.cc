// Text in and out of the Slurm commands (io/slurm/slurm_commands.h).
#include "io/slurm/slurm_commands.h"

#include <algorithm>
#include <array>
#include <sstream>

#include <fmt/format.h>

#include "celos/time.h"
#include "celos/utf8.h"

namespace celos {
namespace slurm {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  for (;;) {
    const auto end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

std::string_view trim_output(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

bool has_text(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// A path inside a shell script: single quotes, with embedded single quotes spelled '\''.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A path given to --output/--error: a `%` of the path must not be read as a pattern.
std::string pattern_escape(const std::string& path) {
  std::string out;
  for (char c : path) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

}  // namespace

std::map<std::string, QueueEntry> parse_queue(std::string_view text) {
  std::map<std::string, QueueEntry> entries;
  for (std::string_view line : split(text, '\n')) {
    const auto fields = split(trim_output(line), '|');
    if (fields.size() < 2 || !is_job_id(fields[0])) continue;
    QueueEntry entry{std::string(trim_output(fields[1])), ""};
    if (fields.size() > 2) entry.reason = std::string(trim_output(fields[2]));
    entries[std::string(fields[0])] = std::move(entry);
  }
  return entries;
}

std::string parse_job_id(std::string_view text) {
  const std::string_view id = trim_output(trim_output(text).substr(0, trim_output(text).find(';')));
  return is_job_id(id) ? std::string(id) : std::string();
}

bool controller_unreachable(std::string_view err) {
  static constexpr std::array<std::string_view, 6> kOutage = {
      "Unable to contact slurm controller",
      "Socket timed out",
      "Zero Bytes were transmitted",
      "Communication connection failure",
      "Slurm backup controller in standby mode",
      "Connection refused"};
  return std::any_of(kOutage.begin(), kOutage.end(),
                     [&](std::string_view part) { return has_text(err, part); });
}

bool invalid_job_id(std::string_view err) { return has_text(err, "Invalid job id specified"); }

std::map<std::string, std::string> per_job_complaints(std::string_view err) {
  std::map<std::string, std::string> complaints;
  for (std::string_view line : split(err, '\n')) {
    line = trim_output(line);
    const auto at = line.rfind(" for job ");
    if (at == std::string_view::npos) continue;
    const std::string_view id = trim_output(line.substr(at + 9));
    if (is_job_id(id)) complaints[std::string(id)] = std::string(line.substr(0, at));
  }
  return complaints;
}

std::string one_line(std::string_view err) {
  std::string out;
  for (std::string_view line : split(err, '\n')) {
    line = trim_output(line);
    for (std::string_view prefix : {"sbatch: error: ", "sbatch: ", "error: "}) {
      if (line.starts_with(prefix)) line.remove_prefix(prefix.size());
    }
    if (line.empty()) continue;
    if (!out.empty()) out += "; ";
    out += line;
  }
  out = clipped(out, 1000);
  return out.empty() ? std::string("no error output") : out;
}

bool is_job_id(std::string_view id) {
  return !id.empty() && id.size() < 20 &&
         std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string wrapper_script(const std::string& slot_dir, bool enter_job_dir,
                           const std::vector<JobDirVariable>& variables) {
  std::string text =
      "#!/bin/sh\n"
      "# celos: runs the workflow's script and records its exit status (SPEC 16).\n"
      "d=" +
      shell_quote(slot_dir) + "/\"$SLURM_JOB_ID\"\n";
  for (const JobDirVariable& v : variables) {
    text +=
        "export " + v.name + "=" + shell_quote(v.prefix) + "\"$d\"/" + shell_quote(v.file) + "\n";
  }
  if (enter_job_dir) text += "cd \"$d\" || exit 1\n";
  text +=
      "\"$d/script\"\n"
      "s=$?\n"
      "printf '%s\\n' \"$s\" > \"$d/exit.tmp\" && mv -f \"$d/exit.tmp\" \"$d/exit\"\n"
      "exit \"$s\"\n";
  return text;
}

std::string job_script(const std::string& script) {
  if (script.starts_with("#!")) return script;
  return "#!/bin/sh\n" + script + (script.ends_with('\n') ? "" : "\n");
}

std::vector<std::string> sbatch_args(const SlurmServiceOptions& options, const SlotId& slot,
                                     const std::string& slot_dir) {
  const auto replaced = [&](const std::string& text) {
    return replace_time_variables(text, slot.time);
  };
  std::vector<std::string> args = {
      "--parsable",
      "--hold",
      "--job-name=" + slot.workflow + "@" + format_time_short(slot.time),
      "--output=" + pattern_escape(slot_dir) + "/%j/stdout",
      "--error=" + pattern_escape(slot_dir) + "/%j/stderr",
      "--chdir=" + (options.cwd.empty() ? slot_dir : replaced(options.cwd)),
  };
  const auto add = [&](const char* name, const std::string& value) {
    if (!value.empty()) args.push_back(fmt::format("--{}={}", name, replaced(value)));
  };
  add("partition", options.partition);
  add("account", options.account);
  add("qos", options.qos);
  add("time", options.time);
  if (options.cpus) args.push_back(fmt::format("--cpus-per-task={}", *options.cpus));
  add("mem", options.mem);
  for (const auto& arg : options.extra_args) args.push_back(replaced(arg));
  return args;
}

}  // namespace slurm

JobState slurm_job_state(std::string_view state) {
  state = state.substr(0, state.find(' '));  // sacct: "CANCELLED by 0"
  if (!state.empty() && state.back() == '+') state.remove_suffix(1);
  if (state == "COMPLETED") return JobState::kSuccess;
  static constexpr std::array<std::string_view, 10> kFailures = {
      "FAILED",    "CANCELLED", "TIMEOUT",  "NODE_FAIL",    "OUT_OF_MEMORY",
      "PREEMPTED", "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT", "REVOKED"};
  if (std::find(kFailures.begin(), kFailures.end(), state) != kFailures.end()) {
    return JobState::kFailure;
  }
  return JobState::kRunning;  // PENDING, RUNNING, ... and anything unknown
}

Result<void> validate_slurm_extra_args(const std::vector<std::string>& args) {
  // SPEC §16's list, plus what would change sbatch's answer (help, usage, version, test-only).
  static constexpr std::array<std::string_view, 18> kControlled = {
      "output",     "error",  "chdir",       "job-name", "wrap",    "parsable",
      "hold",       "export", "export-file", "uid",      "gid",     "array",
      "dependency", "input",  "help",        "usage",    "version", "test-only"};
  for (const std::string& arg : args) {
    const std::string_view name =
        arg.starts_with("--") ? std::string_view(arg).substr(2, arg.find('=') - 2) : "";
    const bool well_formed =
        !name.empty() && name.front() != '-' && std::all_of(name.begin(), name.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-';
        });
    if (!well_formed) {
      return fail(fmt::format("extraArgs entry \"{}\" is not one --name or --name=value", arg),
                  ErrorCode::kInvalid);
    }
    // sbatch accepts unambiguous abbreviations (--out= is --output=): refuse those too.
    for (std::string_view controlled : kControlled) {
      if (controlled.starts_with(name)) {
        return fail(fmt::format("extraArgs entry \"{}\": --{} is set by celos", arg, controlled),
                    ErrorCode::kInvalid);
      }
    }
  }
  return {};
}

std::string slurm_slot_dir(const std::string& jobs_dir, const SlotId& slot) {
  return fmt::format("{}/{}/{}/{}", jobs_dir, slot.workflow, format_day(slot.time),
                     format_time_of_day(slot.time));
}

}  // namespace celos
