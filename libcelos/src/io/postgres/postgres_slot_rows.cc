// Slot states in PostgreSQL (celos_slots): read back from rows, and written, for the state
// database and --import-db: a
// small batch as multi-row INSERT … SELECT FROM unnest(arrays) … ON CONFLICT statements, a large
// one (a first step: 168,000 states) through COPY into a temporary table and one upsert from it;
// and slot history entries.
#include <algorithm>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/state_codecs.h"
#include "io/pg.h"
#include "io/postgres/postgres_schema.h"

namespace celos {
namespace {

constexpr std::size_t kRowsPerStatement = 20'000;
// From this many states on a batch is sent with COPY (a temporary table per transaction is not
// worth it for the few changes of a steady step).
constexpr std::size_t kCopyFrom = 5'000;

// {"<dataset>": ["<time>", …]}, as the file backend stores "consumed".
std::string consumed_json(const SlotState& s) {
  boost::json::object consumed;
  for (const auto& [dataset, times] : s.consumed) {
    boost::json::array list;
    for (Time t : times) list.emplace_back(format_time(t));
    consumed[dataset] = std::move(list);
  }
  return boost::json::serialize(consumed);
}

// The columns an upsert replaces.
constexpr const char* kUpdateColumns =
    "status = excluded.status, external_id = excluded.external_id, "
    "retry_count = excluded.retry_count, message = excluded.message, "
    "retry_at = excluded.retry_at, consumed = excluded.consumed, backfill = excluded.backfill, "
    "deadline = excluded.deadline, deadline_state = excluded.deadline_state, "
    "run_id = excluded.run_id";

pg::Param deadline_param(const SlotState& s) {
  return s.deadline ? pg::Param(format_time(*s.deadline)) : std::nullopt;
}

pg::Param deadline_state_param(const SlotState& s) {
  return s.deadline_state ? pg::Param(std::string(to_string(*s.deadline_state))) : std::nullopt;
}

Result<void> insert_chunk(PGconn* c, const SlotState* const* states, std::size_t n) {
  std::vector<pg::Param> wf, time, status, ext, retry, message, retry_at, consumed, backfill,
      deadline, deadline_state, run_id;
  for (std::size_t i = 0; i < n; ++i) {
    const SlotState& s = *states[i];
    wf.emplace_back(s.id.workflow);
    time.emplace_back(format_time(s.id.time));
    status.emplace_back(std::string(to_string(s.status)));
    ext.push_back(s.external_id);
    retry.emplace_back(std::to_string(s.retry_count));
    message.push_back(s.message);
    run_id.push_back(s.run_id);
    retry_at.push_back(s.retry_at ? pg::Param(format_time(*s.retry_at)) : std::nullopt);
    backfill.push_back(s.backfill);
    if (s.consumed.empty()) {
      consumed.emplace_back(std::nullopt);
    } else {
      consumed.emplace_back(consumed_json(s));
    }
    deadline.push_back(deadline_param(s));
    deadline_state.push_back(deadline_state_param(s));
  }
  auto r = pg::exec(
      c,
      "INSERT INTO celos_slots (workflow, slot_time, status, external_id, retry_count, "
      "message, retry_at, consumed, backfill, deadline, deadline_state, run_id) SELECT * FROM "
      "unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::integer[], $6::text[], "
      "$7::timestamptz[], $8::jsonb[], $9::text[], $10::timestamptz[], $11::text[], $12::text[]) "
      "ON CONFLICT (workflow, slot_time) DO UPDATE SET " +
          std::string(kUpdateColumns),
      {pg::array_literal(wf), pg::array_literal(time), pg::array_literal(status),
       pg::array_literal(ext), pg::array_literal(retry), pg::array_literal(message),
       pg::array_literal(retry_at), pg::array_literal(consumed), pg::array_literal(backfill),
       pg::array_literal(deadline), pg::array_literal(deadline_state), pg::array_literal(run_id)});
  if (!r) return tl::unexpected(r.error());
  return {};
}

// The columns of celos_slots in COPY's text format, one line per state.
std::string copy_rows(const std::vector<const SlotState*>& states) {
  std::string out;
  out.reserve(states.size() * 64);
  for (const SlotState* s : states) {
    pg::copy_field(out, s->id.workflow, '\t');
    pg::copy_field(out, format_time(s->id.time), '\t');
    pg::copy_field(out, std::string(to_string(s->status)), '\t');
    pg::copy_field(out, s->external_id, '\t');
    pg::copy_field(out, std::to_string(s->retry_count), '\t');
    pg::copy_field(out, s->message, '\t');
    pg::copy_field(out, s->retry_at ? pg::Param(format_time(*s->retry_at)) : std::nullopt, '\t');
    pg::copy_field(out, s->consumed.empty() ? std::nullopt : pg::Param(consumed_json(*s)), '\t');
    pg::copy_field(out, s->backfill, '\t');
    pg::copy_field(out, deadline_param(*s), '\t');
    pg::copy_field(out, deadline_state_param(*s), '\t');
    pg::copy_field(out, s->run_id, '\n');
  }
  return out;
}

// A large batch (a first step: 168,000 states) goes through COPY into a temporary table and one
// upsert from it: about a fifth cheaper for the server than parsing the same rows as arrays.
Result<void> copy_slot_rows(PGconn* c, const std::vector<const SlotState*>& states) {
  if (auto made = pg::exec_script(c,
                                  "DROP TABLE IF EXISTS pg_temp.celos_slots_in; "
                                  "CREATE TEMP TABLE celos_slots_in (LIKE celos_slots) "
                                  "ON COMMIT DROP");
      !made) {
    return made;
  }
  // Columns named: a later migration may add some.
  const std::string columns =
      "(workflow, slot_time, status, external_id, retry_count, message, retry_at, consumed, "
      "backfill, deadline, deadline_state, run_id)";
  if (auto copied =
          pg::copy_in(c, "COPY celos_slots_in " + columns + " FROM STDIN", copy_rows(states));
      !copied) {
    return copied;
  }
  auto r = pg::exec(
      c, "INSERT INTO celos_slots " + columns +
             " SELECT workflow, slot_time, status, external_id, retry_count, message, retry_at, "
             "consumed, backfill, deadline, deadline_state, run_id FROM celos_slots_in "
             "ON CONFLICT (workflow, slot_time) DO UPDATE SET " +
             std::string(kUpdateColumns));
  if (!r) return tl::unexpected(r.error());
  return {};
}

}  // namespace

Result<void> insert_slot_rows(PGconn* c, const std::vector<const SlotState*>& states) {
  if (states.size() >= kCopyFrom) return copy_slot_rows(c, states);
  for (std::size_t i = 0; i < states.size(); i += kRowsPerStatement) {
    const std::size_t n = std::min(kRowsPerStatement, states.size() - i);
    auto done = insert_chunk(c, states.data() + i, n);
    if (!done) return done;
  }
  return {};
}

Result<void> insert_history_rows(PGconn* c, const std::vector<SlotHistoryEntry>& entries) {
  for (std::size_t i = 0; i < entries.size(); i += kRowsPerStatement) {
    std::vector<pg::Param> wf, time, entry;
    for (std::size_t j = i; j < std::min(entries.size(), i + kRowsPerStatement); ++j) {
      wf.emplace_back(entries[j].to.id.workflow);
      time.emplace_back(format_time(entries[j].to.id.time));
      entry.emplace_back(history_entry_to_json(entries[j]));
    }
    auto r = pg::exec(c,
                      "INSERT INTO celos_history (workflow, slot_time, entry) SELECT w, s, e FROM "
                      "unnest($1::text[], $2::timestamptz[], $3::text[]) WITH ORDINALITY AS "
                      "t(w, s, e, n) ORDER BY n",
                      {pg::array_literal(wf), pg::array_literal(time), pg::array_literal(entry)});
    if (!r) return tl::unexpected(r.error());
  }
  return {};
}

Result<std::size_t> delete_old_history_rows(PGconn* c, Time before) {
  if (auto begun = pg::exec(c, "BEGIN"); !begun) return tl::unexpected(begun.error());
  // Once an hour at most, over the whole table: no statement timeout of the pool's applies.
  auto r = pg::exec(c, "SET LOCAL statement_timeout = 0");
  if (r) {
    r = pg::exec(c,
                 "DELETE FROM celos_history h WHERE h.slot_time < $1 AND NOT EXISTS ("
                 "SELECT 1 FROM celos_history n WHERE n.workflow = h.workflow "
                 "AND n.slot_time = h.slot_time AND (n.entry::jsonb ->> 'at')::timestamptz >= $1)",
                 {format_time(before)});
  }
  if (!r) {
    (void)pg::exec(c, "ROLLBACK");
    return tl::unexpected(r.error());
  }
  const std::size_t deleted = std::stoull(PQcmdTuples(r->get()));
  if (auto committed = pg::exec(c, "COMMIT"); !committed) {
    return tl::unexpected(committed.error());
  }
  return deleted;
}

Result<Time> time_from_ms(const std::optional<std::string>& text) {
  if (!text) return fail("NULL time", ErrorCode::kCorrupt);
  return Time{std::chrono::milliseconds(std::stoll(*text))};
}

Result<std::vector<SlotState>> rows_to_states(PGresult* r) {
  std::vector<SlotState> out;
  const int rows = PQntuples(r);
  out.reserve(static_cast<std::size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    auto s = row_to_state(r, i);
    if (!s) return tl::unexpected(s.error());
    out.push_back(std::move(*s));
  }
  return out;
}

Result<SlotState> row_to_state(PGresult* r, int row) {
  const std::string workflow = pg::field(r, row, 0).value_or("");
  auto t = time_from_ms(pg::field(r, row, 1));
  if (!t) return tl::unexpected(t.error());
  const SlotId id{workflow, *t};
  auto status = parse_slot_status(pg::field(r, row, 2).value_or(""));
  if (!status) {
    return fail(fmt::format("corrupt slot row {}: {}", to_string(id), status.error().message),
                ErrorCode::kCorrupt);
  }
  SlotState s = SlotState::of(id, *status, pg::field(r, row, 3),
                              std::stoi(pg::field(r, row, 4).value_or("0")));
  s.message = pg::field(r, row, 5);
  if (auto retry_at = pg::field(r, row, 6))
    s.retry_at = Time{std::chrono::milliseconds(std::stoll(*retry_at))};
  if (auto consumed = pg::field(r, row, 7)) {
    auto parsed =
        slot_state_from_json(id, "{\"status\":\"WAITING\",\"consumed\":" + *consumed + "}");
    if (!parsed) {
      return fail(fmt::format("corrupt slot row {}: {}", to_string(id), parsed.error().message),
                  ErrorCode::kCorrupt);
    }
    s.consumed = parsed->consumed;
  }
  s.backfill = pg::field(r, row, 8);
  if (auto deadline = pg::field(r, row, 9))
    s.deadline = Time{std::chrono::milliseconds(std::stoll(*deadline))};
  if (auto state = pg::field(r, row, 10)) {
    auto parsed = parse_deadline_state(*state);
    if (!parsed) {
      return fail(fmt::format("corrupt slot row {}: {}", to_string(id), parsed.error().message),
                  ErrorCode::kCorrupt);
    }
    s.deadline_state = *parsed;
  }
  s.run_id = pg::field(r, row, 11);
  return s;
}

}  // namespace celos
