// The durable spool of OpenLineage events (celos/lineage.h): <dir>/spool.jsonl, append-only,
// one JSON object a line:
//
//   {"p": seq, "run": id, "type": "START", "workflow": w, "time": slot, "event": "<RunEvent>"}
//   {"c": seq}   committed: its slot change is stored
//   {"a": seq}   aborted: its slot change was not stored
//   {"d": seq}   done: sent, given up, or dropped from a full spool
//
// A "p" line is durable before the slot change is visible: appended by prepare(), synced by
// sync(), which the state database runs before it makes the change visible (after its own sync
// of the disk, when it has one: the file database's sync of a large group carries the lines, and
// the spool's own sync then finds nothing left to write); "c", "a" and "d" lines ride along with
// the next sync. A "c" line lost in a crash is recovered at start-up from the stored slot: the
// START of run R happened iff the slot's runId is R; the end of run R happened iff the slot is
// not RUNNING with runId R (nothing can move it past that state without first syncing a later
// line, which carries the lost one with it). A lost "d" line only sends an event again, the same.
#include <algorithm>
#include <set>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/lineage.h"

namespace celos {
namespace json = boost::json;

struct LineageSpool::State {
  struct Entry {
    LineageEvent event;
    bool committed = false;
  };
  std::map<std::uint64_t, Entry> entries;              // live: prepared or committed, by seq
  std::set<std::pair<std::string, std::string>> keys;  // (run, type) of live entries
  std::map<std::uint64_t, std::vector<std::uint64_t>> tickets;
  std::uint64_t next_seq = 1, next_ticket = 1;
  std::string buffered;   // "c", "a", "d" lines not appended yet
  std::size_t lines = 0;  // lines in the file
  std::size_t committed = 0;
  std::uint64_t dropped = 0;
  std::set<std::uint64_t> unsettled;  // "p" lines found without an outcome at start-up
};

namespace {

std::string path_of(const LineageSpoolOptions& options) { return options.dir + "/spool.jsonl"; }

std::string prepared_line(std::uint64_t seq, const LineageEvent& e) {
  json::object o;
  o["p"] = seq;
  o["run"] = e.run_id;
  o["type"] = e.type;
  o["workflow"] = e.slot.workflow;
  o["time"] = format_time(e.slot.time);
  o["event"] = e.json;
  return json::serialize(o) + "\n";
}

std::string outcome_line(char what, std::uint64_t seq) {
  return fmt::format("{{\"{}\":{}}}\n", what, seq);
}

std::optional<LineageEvent> event_of_line(const json::object& o) {
  const auto* run = o.if_contains("run");
  const auto* type = o.if_contains("type");
  const auto* wf = o.if_contains("workflow");
  const auto* time = o.if_contains("time");
  const auto* event = o.if_contains("event");
  if (!run || !type || !wf || !time || !event || !run->is_string() || !type->is_string() ||
      !wf->is_string() || !time->is_string() || !event->is_string()) {
    return std::nullopt;
  }
  auto t = parse_time(std::string_view(time->get_string()));
  if (!t) return std::nullopt;
  return LineageEvent{std::string(run->get_string()), std::string(type->get_string()),
                      SlotId{std::string(wf->get_string()), *t}, std::string(event->get_string())};
}

// Replays the file: a torn line (a crash mid-append) is skipped.
void replay(std::string_view text, LineageSpool::State& s) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    boost::system::error_code ec;
    json::value v = json::parse(line, ec);
    if (ec || !v.is_object()) continue;
    const json::object& o = v.get_object();
    ++s.lines;
    if (const auto* p = o.if_contains("p"); p && p->is_int64()) {
      auto e = event_of_line(o);
      if (!e) continue;
      const auto seq = static_cast<std::uint64_t>(p->get_int64());
      s.keys.insert({e->run_id, e->type});
      s.entries[seq] = {std::move(*e), false};
      s.unsettled.insert(seq);
      s.next_seq = std::max(s.next_seq, seq + 1);
      continue;
    }
    for (const char* k : {"c", "a", "d"}) {
      const auto* n = o.if_contains(k);
      if (!n || !n->is_int64()) continue;
      const auto seq = static_cast<std::uint64_t>(n->get_int64());
      s.unsettled.erase(seq);
      auto it = s.entries.find(seq);
      if (it == s.entries.end()) continue;
      if (*k == 'c') {
        it->second.committed = true;
      } else {
        s.keys.erase({it->second.event.run_id, it->second.event.type});
        s.entries.erase(it);
      }
    }
  }
}

// Drops a live entry, with its "a" (aborted) or "d" (done) line; the next entry.
auto forget(LineageSpool::State& s,
            std::map<std::uint64_t, LineageSpool::State::Entry>::iterator it, char what) {
  if (it->second.committed) --s.committed;
  s.keys.erase({it->second.event.run_id, it->second.event.type});
  s.buffered += outcome_line(what, it->first);
  return s.entries.erase(it);
}

// Whether the stored slot shows the change that emitted `e` (see the top of the file).
bool stored_shows(const LineageEvent& e, const std::optional<SlotState>& stored) {
  if (!e.is_final()) return stored && stored->run_id == e.run_id;
  return !(stored && stored->status == SlotStatus::kRunning && stored->run_id == e.run_id);
}

}  // namespace

LineageSpool::LineageSpool(LineageSpoolOptions options, std::function<WorkflowConfigPtr()> config,
                           LineageOptions lineage, std::unique_ptr<State> state)
    : options_(std::move(options)),
      config_(std::move(config)),
      lineage_(std::move(lineage)),
      state_(std::move(state)) {}

LineageSpool::~LineageSpool() = default;

Result<std::unique_ptr<LineageSpool>> LineageSpool::open(LineageSpoolOptions options,
                                                         StateDatabase& db,
                                                         std::function<WorkflowConfigPtr()> config,
                                                         LineageOptions lineage) {
  auto state = std::make_unique<State>();
  auto text = options.fs->read(path_of(options));
  if (!text && text.error().code != ErrorCode::kNotFound) {
    return fail(fmt::format("OpenLineage spool {}: {}", path_of(options), text.error().message));
  }
  if (text) replay(*text, *state);
  std::unique_ptr<LineageSpool> spool(new LineageSpool(std::move(options), std::move(config),
                                                       std::move(lineage), std::move(state)));
  spool->db_ = &db;
  if (auto settled = spool->settle_after_crash(db); !settled)
    return tl::unexpected(settled.error());
  return spool;
}

Result<void> LineageSpool::settle_after_crash(StateDatabase& db) {
  MutexLock lock(mutex_);
  State& s = *state_;
  for (std::uint64_t seq : s.unsettled) {
    const LineageEvent& e = s.entries.at(seq).event;
    auto stored = db.get_slot(e.slot);
    if (!stored) {
      return fail(fmt::format("OpenLineage spool: reading slot {} failed: {}", to_string(e.slot),
                              stored.error().message));
    }
    if (stored_shows(e, *stored)) {
      commit_locked(seq);
    } else {
      spdlog::info("OpenLineage: {} of run {} (slot {}) dropped: its change was never stored",
                   e.type, e.run_id, to_string(e.slot));
      abort_locked(seq);
    }
  }
  s.unsettled.clear();
  s.committed = 0;
  for (const auto& [seq, entry] : s.entries) s.committed += entry.committed ? 1 : 0;
  spdlog::info("OpenLineage spool {}: {} events to send", path_of(options_), s.committed);
  return compact_locked();
}

Result<std::uint64_t> LineageSpool::prepare(const std::vector<SlotChange>& changes) {
  WorkflowConfigPtr config = config_ ? config_() : nullptr;
  if (!config) return std::uint64_t{0};
  std::vector<LineageEvent> events;
  for (const SlotChange& c : changes) {
    if (auto e = lineage_event(c, *config, lineage_)) events.push_back(std::move(*e));
  }
  if (events.empty()) return std::uint64_t{0};
  MutexLock lock(mutex_);
  State& s = *state_;
  std::vector<std::uint64_t> seqs;
  std::string lines;
  for (LineageEvent& e : events) {
    if (!s.keys.insert({e.run_id, e.type}).second) continue;  // spooled already (a write retried)
    const std::uint64_t seq = s.next_seq++;
    lines += prepared_line(seq, e);
    s.entries[seq] = {std::move(e), false};
    seqs.push_back(seq);
  }
  if (seqs.empty()) return std::uint64_t{0};
  make_room_locked(0);
  if (auto appended = append_locked(std::move(lines), /*sync=*/false); !appended) {
    for (std::uint64_t seq : seqs) abort_locked(seq);  // "a" lines of unknown seqs: ignored
    return fail(
        fmt::format("OpenLineage spool {}: {}", path_of(options_), appended.error().message));
  }
  const std::uint64_t ticket = s.next_ticket++;
  s.tickets[ticket] = std::move(seqs);
  return ticket;
}

Result<void> LineageSpool::sync(std::uint64_t ticket) {
  if (ticket == 0) return {};
  MutexLock lock(mutex_);
  if (auto synced = options_.fs->sync_files({path_of(options_)}); !synced) {
    return fail(fmt::format("OpenLineage spool {}: {}", path_of(options_), synced.error().message));
  }
  return {};
}

void LineageSpool::settle(std::uint64_t ticket, bool written) {
  if (ticket == 0) return;
  {
    MutexLock lock(mutex_);
    State& s = *state_;
    auto it = s.tickets.find(ticket);
    if (it == s.tickets.end()) return;
    for (std::uint64_t seq : it->second) {
      bool stored = written;
      if (!written) {  // some states of a failed write may be stored all the same
        const LineageEvent& e = s.entries.at(seq).event;
        auto slot = db_->get_slot(e.slot);
        stored = slot && stored_shows(e, *slot);
      }
      if (stored) {
        commit_locked(seq);
      } else {
        abort_locked(seq);
      }
    }
    s.tickets.erase(it);
    make_room_locked(0);
  }
  if (on_pending_) on_pending_();
}

void LineageSpool::commit_locked(std::uint64_t seq) {
  State& s = *state_;
  auto it = s.entries.find(seq);
  if (it == s.entries.end() || it->second.committed) return;
  it->second.committed = true;
  ++s.committed;
  s.buffered += outcome_line('c', seq);
}

void LineageSpool::abort_locked(std::uint64_t seq) {
  State& s = *state_;
  if (auto it = s.entries.find(seq); it != s.entries.end()) forget(s, it, 'a');
}

// A dead collector must not fill the disk: beyond the capacity the oldest committed events go.
void LineageSpool::make_room_locked(std::size_t adding) {
  State& s = *state_;
  for (auto it = s.entries.begin();
       it != s.entries.end() && s.committed + adding > options_.capacity;) {
    if (!it->second.committed) {
      ++it;
      continue;
    }
    spdlog::warn("OpenLineage spool full ({} events): dropped {} of run {} (slot {})",
                 options_.capacity, it->second.event.type, it->second.event.run_id,
                 to_string(it->second.event.slot));
    ++s.dropped;
    if (options_.on_drop) options_.on_drop();
    it = forget(s, it, 'd');
  }
}

std::vector<SpoolEntry> LineageSpool::pending(std::size_t n) const {
  MutexLock lock(mutex_);
  std::vector<SpoolEntry> out;
  for (const auto& [seq, entry] : state_->entries) {
    if (out.size() >= n) break;
    if (!entry.committed) break;  // in order: a later event waits for an earlier unsettled one
    out.push_back({seq, entry.event});
  }
  return out;
}

void LineageSpool::remove(const std::vector<std::uint64_t>& seqs) {
  MutexLock lock(mutex_);
  State& s = *state_;
  for (std::uint64_t seq : seqs) {
    if (auto it = s.entries.find(seq); it != s.entries.end()) forget(s, it, 'd');
  }
}

Result<void> LineageSpool::flush() {
  MutexLock lock(mutex_);
  State& s = *state_;
  if (s.lines > 2 * s.entries.size() + 4096) return compact_locked();
  if (s.buffered.empty()) return {};
  return append_locked("", /*sync=*/true);
}

Result<void> LineageSpool::append_locked(std::string more, bool sync) {
  State& s = *state_;
  std::string data = s.buffered + more;
  if (data.empty()) return {};
  const std::vector<FileWrite> append{{path_of(options_), data}};
  if (auto done =
          sync ? options_.fs->append_files(append) : options_.fs->append_files_unsynced(append);
      !done) {
    return done;  // the buffered lines wait for the next append
  }
  s.buffered.clear();
  s.lines += static_cast<std::size_t>(std::count(data.begin(), data.end(), '\n'));
  return {};
}

// Rewrites the file with the live entries only (atomically: temp file, sync, rename).
Result<void> LineageSpool::compact_locked() {
  State& s = *state_;
  std::string data;
  std::size_t lines = 0;
  for (const auto& [seq, entry] : s.entries) {
    data += prepared_line(seq, entry.event);
    ++lines;
    if (entry.committed) {
      data += outcome_line('c', seq);
      ++lines;
    }
  }
  if (auto made = options_.fs->make_dirs(options_.dir); !made) return made;
  if (auto written = options_.fs->write_files({{path_of(options_), data}}); !written) {
    return fail(
        fmt::format("OpenLineage spool {}: {}", path_of(options_), written.error().message));
  }
  s.buffered.clear();
  s.lines = lines;
  return {};
}

std::size_t LineageSpool::size() const {
  MutexLock lock(mutex_);
  return state_->committed;
}

std::uint64_t LineageSpool::dropped() const {
  MutexLock lock(mutex_);
  return state_->dropped;
}

void LineageSpool::set_on_pending(std::function<void()> on_pending) {
  on_pending_ = std::move(on_pending);
}

}  // namespace celos
