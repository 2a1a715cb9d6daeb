// --import-db: a file database (SPEC §5, the original's format included) into PostgreSQL in one
// transaction (SPEC §11, §16). The directory is read whole before anything is written, so a
// corrupt file stops the import with nothing written.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <sys/stat.h>

#include "celos/backfill.h"
#include "celos/file_system.h"
#include "celos/state_codecs.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"
#include "io/json_lines.h"
#include "io/pg.h"
#include "io/postgres/postgres_schema.h"

namespace celos {
namespace {

namespace fs = std::filesystem;

struct FileContents {
  std::map<SlotId, SlotState> slots;
  std::map<SlotId, Time> reruns;  // slot -> when the rerun was asked
  std::vector<std::string> paused;
  std::map<SlotId, Time> announced;              // (dataset, instance) -> when it was announced
  std::optional<std::string> maintenance;        // the record, when one was set
  std::vector<SlotHistoryEntry> history;         // per file in append order
  std::map<std::string, std::string> backfills;  // plan id -> its record (celos/backfill.h)
};

Result<std::string> read_all(const fs::path& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return fail(fmt::format("cannot read {}", path.string()));
  std::string text;
  char buffer[8192];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) text.append(buffer, n);
  std::fclose(f);
  return text;
}

// The file `path` read and parsed; kCorrupt naming it ("corrupt <what> file <path>: <why>") when
// `parse` refuses its content.
template <class Parse>
auto read_parsed(const fs::path& path, std::string_view what, Parse&& parse)
    -> decltype(parse(std::string())) {
  auto text = read_all(path);
  if (!text) return tl::unexpected(text.error());
  auto parsed = parse(*text);
  if (!parsed) {
    return fail(fmt::format("corrupt {} file {}: {}", what, path.string(), parsed.error().message),
                ErrorCode::kCorrupt);
  }
  return parsed;
}

bool hidden(const fs::path& p) { return p.filename().string().starts_with("."); }

// <area>/<workflow>/<yyyy-mm-dd>/<HH:MM:SS.sssZ> files, with their slot ids.
Result<std::vector<std::pair<SlotId, fs::path>>> slot_files(const fs::path& area) {
  std::vector<std::pair<SlotId, fs::path>> out;
  std::error_code ec;
  if (!fs::is_directory(area, ec)) return out;
  for (const auto& wf : fs::directory_iterator(area)) {
    if (!wf.is_directory() || hidden(wf.path())) continue;
    for (const auto& day : fs::directory_iterator(wf.path())) {
      if (!day.is_directory() || hidden(day.path())) continue;
      for (const auto& file : fs::directory_iterator(day.path())) {
        if (!file.is_regular_file() || hidden(file.path())) continue;
        auto t = parse_time(day.path().filename().string() + "T" + file.path().filename().string());
        if (!t) {
          return fail(
              fmt::format("corrupt file database: unexpected file {}", file.path().string()),
              ErrorCode::kCorrupt);
        }
        out.push_back({SlotId{wf.path().filename().string(), *t}, file.path()});
      }
    }
  }
  return out;
}

// When a marker was written: its rerunTime, or (the original's empty markers) its mtime.
Result<Time> rerun_time(const fs::path& path, const std::string& text) {
  boost::system::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (!ec && v.is_object()) {
    if (const auto* t = v.as_object().if_contains("rerunTime"); t && t->is_string()) {
      if (auto parsed = parse_time(std::string_view(t->get_string()))) return *parsed;
    }
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return fail(fmt::format("cannot stat {}", path.string()));
  return Time{std::chrono::milliseconds(std::int64_t{st.st_mtim.tv_sec} * 1000 +
                                        st.st_mtim.tv_nsec / 1'000'000)};
}

// Calls `f(owner, path, text)` for each <area>/<owner>/<day>.jsonl file (the append-only
// files of io/json_lines.h), owners in directory order, each owner's days in order.
Result<void> for_each_jsonl_file(
    const fs::path& area,
    const std::function<void(const std::string&, const fs::path&, const std::string&)>& f) {
  std::error_code ec;
  if (!fs::is_directory(area, ec)) return {};
  for (const auto& owner : fs::directory_iterator(area)) {
    if (!owner.is_directory() || hidden(owner.path())) continue;
    std::vector<fs::path> days;
    for (const auto& file : fs::directory_iterator(owner.path())) {
      if (file.path().extension() == ".jsonl" && !hidden(file.path())) {
        days.push_back(file.path());
      }
    }
    std::sort(days.begin(), days.end());
    for (const fs::path& day : days) {
      auto text = read_all(day);
      if (!text) return tl::unexpected(text.error());
      f(owner.path().filename().string(), day, *text);
    }
  }
  return {};
}

// <dir>/history/<workflow>/<day>.jsonl, each file's lines in append order. A line that does
// not parse is a line torn by a crash (the file backend's readers skip it too): skipped, logged.
Result<void> read_history(const fs::path& dir, std::vector<SlotHistoryEntry>& out) {
  return for_each_jsonl_file(
      dir, [&](const std::string& workflow, const fs::path& path, const std::string& text) {
        for_each_json_line(text, "import: history file " + path.string(),
                           [&](std::string_view line) -> Result<void> {
                             auto entry = history_entry_from_json(workflow, line);
                             if (!entry) return tl::unexpected(entry.error());
                             out.push_back(std::move(*entry));
                             return {};
                           });
      });
}

// <dir>/datasets/: the day files <dataset>/<day>.jsonl and the files of one instance that
// earlier versions wrote, <dataset>/<day>/<HH:MM:SS.sssZ> (io/file_db/file_announcements.h). An
// instance in both, or twice in a day file, keeps its earliest stamp. A line of a day file that
// does not parse is skipped and logged, wherever it is, as the history's lines are (and as the
// file backend's reader skips it: the instance was not announced for the server either); a
// corrupt file of one instance stops the import, as it always did.
Result<void> read_announcements(const fs::path& dir, std::map<SlotId, Time>& out) {
  const auto add = [&](SlotId id, Time announced) {
    auto [at, added] = out.emplace(std::move(id), announced);
    if (!added) at->second = std::min(at->second, announced);
  };
  auto files = slot_files(dir);
  if (!files) return tl::unexpected(files.error());
  for (const auto& [id, path] : *files) {
    auto announced = read_parsed(path, "announcement", announcement_file_from_json);
    if (!announced) return tl::unexpected(announced.error());
    add(id, *announced);
  }
  return for_each_jsonl_file(
      dir, [&](const std::string& dataset, const fs::path& path, const std::string& text) {
        for_each_json_line(text, "import: announcement file " + path.string(),
                           [&](std::string_view line) -> Result<void> {
                             auto announced = announcement_line_from_json(line);
                             if (!announced) return tl::unexpected(announced.error());
                             add(SlotId{dataset, announced->time}, announced->announced);
                             return {};
                           });
      });
}

Result<std::optional<std::string>> read_maintenance(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::optional<std::string>{};
  auto parsed = read_parsed(path, "maintenance", maintenance_from_json);
  if (!parsed) return tl::unexpected(parsed.error());
  return std::optional<std::string>(maintenance_to_json(*parsed));
}

// <dir>/backfills/<id>: the backfill plans' records, checked, copied as they are.
Result<void> read_backfills(const fs::path& dir, std::map<std::string, std::string>& out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {};
  for (const auto& f : fs::directory_iterator(dir)) {
    if (!f.is_regular_file() || hidden(f.path())) continue;
    auto text = read_all(f.path());
    if (!text) return tl::unexpected(text.error());
    auto plan = backfill_from_json(*text);
    const std::string name = f.path().filename().string();
    if (!plan || plan->id != name) {
      return fail(fmt::format("corrupt backfill plan file {}: {}", f.path().string(),
                              plan ? "it is plan " + plan->id : plan.error().message),
                  ErrorCode::kCorrupt);
    }
    out.emplace(name, std::move(*text));
  }
  return {};
}

Result<FileContents> read_directory(const fs::path& dir, Time now) {
  FileContents contents;
  auto slots = slot_files(dir / "state");
  if (!slots) return tl::unexpected(slots.error());
  for (const auto& [id, path] : *slots) {
    const SlotId& slot = id;  // clang before 16 captures no structured binding
    auto state = read_parsed(
        path, "state", [&](std::string_view text) { return slot_state_from_json(slot, text); });
    if (!state) return tl::unexpected(state.error());
    contents.slots.emplace(id, std::move(*state));
  }
  auto reruns = slot_files(dir / "rerun");
  if (!reruns) return tl::unexpected(reruns.error());
  for (const auto& [id, path] : *reruns) {
    auto text = read_all(path);
    if (!text) return tl::unexpected(text.error());
    auto marked = rerun_time(path, *text);
    if (!marked) return tl::unexpected(marked.error());
    auto slot = contents.slots.find(id);
    const bool final = slot != contents.slots.end() && is_final(slot->second.status);
    if (now - *marked > kRerunMarkerLifetime && final) continue;  // expired
    contents.reruns.emplace(id, *marked);
  }
  if (auto announced = read_announcements(dir / "datasets", contents.announced); !announced) {
    return tl::unexpected(announced.error());
  }
  std::error_code ec;
  if (fs::is_directory(dir / "paused", ec)) {
    for (const auto& f : fs::directory_iterator(dir / "paused")) {
      if (!hidden(f.path())) contents.paused.push_back(f.path().filename().string());
    }
  }
  auto maintenance = read_maintenance(dir / "maintenance");
  if (!maintenance) return tl::unexpected(maintenance.error());
  contents.maintenance = std::move(*maintenance);
  if (auto history = read_history(dir / "history", contents.history); !history) {
    return tl::unexpected(history.error());
  }
  if (auto plans = read_backfills(dir / "backfills", contents.backfills); !plans) {
    return tl::unexpected(plans.error());
  }
  return contents;
}

Result<void> empty_or_forced(PGconn* c, bool force) {
  if (force) {
    return pg::exec_script(c,
                           "DELETE FROM celos_slots; DELETE FROM celos_reruns; "
                           "DELETE FROM celos_paused; DELETE FROM celos_announced; "
                           "DELETE FROM celos_history; DELETE FROM celos_maintenance; "
                           "DELETE FROM celos_backfills;");
  }
  auto r = pg::exec(c,
                    "SELECT (SELECT count(*) FROM celos_slots) + (SELECT count(*) FROM "
                    "celos_reruns) + (SELECT count(*) FROM celos_paused) + (SELECT count(*) FROM "
                    "celos_backfills)");
  if (!r) return tl::unexpected(r.error());
  if (pg::field(r->get(), 0, 0).value_or("0") != "0") {
    return fail(fmt::format("state database at {} is not empty: refusing to import into it "
                            "(--force empties it first)",
                            pg::describe(c)),
                ErrorCode::kInvalid);
  }
  return {};
}

Result<void> write_contents(PGconn* c, const FileContents& contents, bool force) {
  if (auto ok = empty_or_forced(c, force); !ok) return ok;
  std::vector<const SlotState*> slots;
  slots.reserve(contents.slots.size());
  for (const auto& [id, s] : contents.slots) slots.push_back(&s);
  if (auto ok = insert_slot_rows(c, slots); !ok) return ok;
  std::vector<pg::Param> wf, time, marked, paused;
  for (const auto& [id, t] : contents.reruns) {
    wf.emplace_back(id.workflow);
    time.emplace_back(format_time(id.time));
    marked.emplace_back(format_time(t));
  }
  auto r = pg::exec(c,
                    "INSERT INTO celos_reruns (workflow, slot_time, rerun_time) SELECT * FROM "
                    "unnest($1::text[], $2::timestamptz[], $3::timestamptz[])",
                    {pg::array_literal(wf), pg::array_literal(time), pg::array_literal(marked)});
  if (!r) return tl::unexpected(r.error());
  std::vector<pg::Param> dataset, instance, stamp;
  for (const auto& [id, t] : contents.announced) {
    dataset.emplace_back(id.workflow);
    instance.emplace_back(format_time(id.time));
    stamp.emplace_back(format_time(t));
  }
  r = pg::exec(c,
               "INSERT INTO celos_announced (dataset, instance_time, announced) SELECT * FROM "
               "unnest($1::text[], $2::timestamptz[], $3::timestamptz[])",
               {pg::array_literal(dataset), pg::array_literal(instance), pg::array_literal(stamp)});
  if (!r) return tl::unexpected(r.error());
  for (const auto& p : contents.paused) paused.emplace_back(p);
  r = pg::exec(c, "INSERT INTO celos_paused (workflow) SELECT * FROM unnest($1::text[])",
               {pg::array_literal(paused)});
  if (!r) return tl::unexpected(r.error());
  if (contents.maintenance) {
    r = pg::exec(c, "INSERT INTO celos_maintenance (id, record) VALUES (1, $1)",
                 {*contents.maintenance});
    if (!r) return tl::unexpected(r.error());
  }
  std::vector<pg::Param> plan_ids, plan_records;
  for (const auto& [id, record] : contents.backfills) {
    plan_ids.emplace_back(id);
    plan_records.emplace_back(record);
  }
  r = pg::exec(c,
               "INSERT INTO celos_backfills (id, record) SELECT * FROM unnest($1::text[], "
               "$2::text[])",
               {pg::array_literal(plan_ids), pg::array_literal(plan_records)});
  if (!r) return tl::unexpected(r.error());
  return insert_history_rows(c, contents.history);
}

}  // namespace

Result<ImportReport> import_file_database(const std::string& dir, const std::string& uri,
                                          bool force, Time now) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return fail(fmt::format("file database directory {} does not exist", dir), ErrorCode::kInvalid);
  }
  auto lock = open_file_state_database(make_local_file_system(), dir);  // held until we return
  if (!lock) return tl::unexpected(lock.error());
  auto contents = read_directory(dir, now);
  if (!contents) return tl::unexpected(contents.error());
  auto target = open_state_database(uri);  // creates or migrates the schema
  if (!target) return tl::unexpected(target.error());
  auto conn = pg::connect(uri);
  if (!conn) return tl::unexpected(conn.error());
  if (auto begun = pg::exec(conn->get(), "BEGIN"); !begun) return tl::unexpected(begun.error());
  if (auto ok = write_contents(conn->get(), *contents, force); !ok) {
    (void)pg::exec(conn->get(), "ROLLBACK");
    return tl::unexpected(ok.error());
  }
  if (auto ok = pg::exec(conn->get(), "COMMIT"); !ok) return tl::unexpected(ok.error());
  return ImportReport{contents->slots.size(), contents->reruns.size(), contents->paused.size(),
                      contents->backfills.size(), contents->history.size()};
}

}  // namespace celos
