// OpenLineage (issue 32): every attempt of a slot is a run of the workflow's job, told to a
// lineage collector (Marquez, DataHub, ...) as RunEvents of the OpenLineage standard:
//
//   START     when the attempt is recorded RUNNING (its runId, a UUID, is stored with the slot)
//   COMPLETE  RUNNING -> SUCCESS
//   FAIL      RUNNING -> FAILURE, or RUNNING -> WAITING for a retry (the retry is a new run)
//   ABORT     RUNNING -> KILLED
//
// Job: namespace --openlineage-namespace (default --cluster-name), name the workflow id. Run
// facets: nominalTime (the slot and the next slot of the schedule), errorMessage on FAIL, and
// for an attempt of a slot a backfill plan owns (SlotState::backfill, celos/backfill.h) parent:
// the plan, as the run backfill_run_id() of the job "backfill/<plan id>" in the same namespace.
// Inputs and outputs: the workflow's datasets, each instance as {namespace of its file system
// (hdfs://nameservice, file://host), name: the instance's path}.
//
// Durability (LineageSpool): the events of a write are appended to <dir>/spool.jsonl
// (SlotOutbox::prepare) and synced before the slot states are visible (sync, run by the state
// database between its sync and its renames: StateDatabase::put_slots_after), and marked
// committed once they are stored (settle). At start-up an entry that was prepared but never settled
// is kept exactly when the state database shows its change stored. So a kill -9 at any moment loses
// no event and never sends one whose change did not happen; an event's content is fixed when it is
// spooled, so one sent twice (accepted, then a crash before its removal was recorded) is sent the
// same. The sender (LineageSender) sends pending events oldest first, one at a time, over a
// LineageTransport; a transport error retries with back-off, a rejection (HTTP 4xx) is retried a
// bounded number of times, then logged with the event and the answer and dropped (counted). A
// full spool drops its oldest event (logged, counted).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "celos/clock.h"
#include "celos/error.h"
#include "celos/file_system.h"
#include "celos/http_client.h"
#include "celos/mutex.h"
#include "celos/scheduler.h"
#include "celos/state_db.h"
#include "celos/workflow.h"

namespace celos {

// The version of the OpenLineage schema the events follow (their "schemaURL").
inline constexpr std::string_view kOpenLineageSchemaUrl =
    "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent";

struct LineageOptions {
  std::string job_namespace = "celos";  // --openlineage-namespace, default --cluster-name
  std::string producer = "urn:celos:celos-server";  // "producer" and the facets' "_producer"
  std::string default_fs = "file:///";  // fs.defaultFS: the file system of datasets without fs
  std::string host = "localhost";       // this machine: the namespace of file:/// datasets
};

struct LineageEvent {
  std::string run_id;
  std::string type;  // START, COMPLETE, FAIL, ABORT
  SlotId slot;
  std::string json;  // the RunEvent

  bool is_final() const { return type != "START"; }
  friend bool operator==(const LineageEvent&, const LineageEvent&) = default;
};

// The event a committed change emits, if any (most emit none; an attempt without a run id, one
// that started before lineage was on, emits none). `at` of the change is the eventTime. Pure.
std::optional<LineageEvent> lineage_event(const SlotChange& change, const WorkflowConfig& config,
                                          const LineageOptions& options);

// The run id of backfill plan `plan` as the parent of its slots' runs: a UUID named by the job
// namespace and the plan id (version 8, the first 128 bits of the SHA-256 of both, as RFC
// 9562's name-based example), so every attempt of the plan names the same parent, on every node
// and after restarts, and plans of two namespaces never share one. Pure.
std::string backfill_run_id(std::string_view job_namespace, std::string_view plan);

// The namespace of datasets on file system `fs` (a URI; "" = options.default_fs):
// scheme://authority, with webhdfs as hdfs and a file system without authority as file://host.
std::string lineage_dataset_namespace(std::string_view fs, const LineageOptions& options);

struct LineageSpoolOptions {
  std::shared_ptr<FileSystem> fs;  // where the spool lives (the local disk)
  std::string dir;                 // <db>/lineage
  std::size_t capacity = 100'000;  // pending events at most; beyond, the oldest are dropped
  // Called (under the spool's lock: keep it quick) for every event dropped because the spool was
  // full: celos_openlineage_dropped_total{reason="spool_full"}.
  std::function<void()> on_drop = {};
};

struct SpoolEntry {
  std::uint64_t seq = 0;
  LineageEvent event;
};

// The durable spool of events (see the top). Thread-safe.
class LineageSpool final : public SlotOutbox {
 public:
  // Opens (creates) <dir>/spool.jsonl: `db` settles entries a crash left unsettled; `config`
  // returns the current workflows (the events' datasets and schedules).
  [[nodiscard]] static Result<std::unique_ptr<LineageSpool>> open(
      LineageSpoolOptions options, StateDatabase& db, std::function<WorkflowConfigPtr()> config,
      LineageOptions lineage);
  ~LineageSpool() override;

  // SlotOutbox: the changes' events, appended; synced before the write is visible; settled
  // after it.
  [[nodiscard]] Result<std::uint64_t> prepare(const std::vector<SlotChange>& changes) override;
  [[nodiscard]] Result<void> sync(std::uint64_t ticket) override;
  void settle(std::uint64_t ticket, bool written) override;

  // The oldest committed events not removed yet, at most `n`, oldest first.
  std::vector<SpoolEntry> pending(std::size_t n) const;
  // Removes sent or given-up events; recorded durably by the next append or flush().
  void remove(const std::vector<std::uint64_t>& seqs);
  // Makes the removals durable (one append and sync); rewrites the file when it is mostly
  // removed entries.
  [[nodiscard]] Result<void> flush();

  std::size_t size() const;       // committed events waiting (celos_openlineage_spool_events)
  std::uint64_t dropped() const;  // dropped because the spool was full
  // Called with nothing under the spool's lock whenever events become pending (the sender's wake).
  void set_on_pending(std::function<void()> on_pending);

  struct State;  // lineage_spool.cc

 private:
  LineageSpool(LineageSpoolOptions options, std::function<WorkflowConfigPtr()> config,
               LineageOptions lineage, std::unique_ptr<State> state);
  [[nodiscard]] Result<void> settle_after_crash(StateDatabase& db);
  // Appends the buffered lines and `more`; `sync`: durable when this returns.
  [[nodiscard]] Result<void> append_locked(std::string more, bool sync) REQUIRES(mutex_);
  [[nodiscard]] Result<void> compact_locked() REQUIRES(mutex_);
  void make_room_locked(std::size_t adding) REQUIRES(mutex_);
  void commit_locked(std::uint64_t seq) REQUIRES(mutex_);
  void abort_locked(std::uint64_t seq) REQUIRES(mutex_);

  LineageSpoolOptions options_;
  std::function<WorkflowConfigPtr()> config_;
  LineageOptions lineage_;
  StateDatabase* db_ = nullptr;
  mutable Mutex mutex_;
  std::unique_ptr<State> state_ GUARDED_BY(mutex_);
  std::function<void()> on_pending_;
};

// How an event leaves: one call per event. kInvalid: the receiver rejected it (HTTP 4xx; given
// up after LineageSenderOptions::max_rejections tries); any other error: try again later.
class LineageTransport {
 public:
  virtual ~LineageTransport() = default;
  [[nodiscard]] virtual Result<void> send(const LineageEvent& event) = 0;
  virtual std::string describe() const = 0;  // for log lines
};

// POST of the event's JSON (Content-Type: application/json) to `url` as given; with a token,
// `Authorization: Bearer <token>`. 2xx: accepted; 4xx: kInvalid with the answer; else an error.
std::unique_ptr<LineageTransport> make_http_lineage_transport(std::shared_ptr<HttpClient> http,
                                                              std::string url, std::string token);
// Appends the event as one JSON line to `path` (created), synced.
std::unique_ptr<LineageTransport> make_file_lineage_transport(std::shared_ptr<FileSystem> fs,
                                                              std::string path);

// --openlineage-url: an http:// or https:// URL with a host; kInvalid saying what is wrong.
[[nodiscard]] Result<void> check_lineage_url(std::string_view url);

struct LineageSenderOptions {
  Clock* clock = nullptr;  // back-off waits; none: system_clock()
  std::chrono::milliseconds first_retry{std::chrono::seconds(1)};
  std::chrono::milliseconds max_retry{std::chrono::seconds(30)};
  int max_rejections = 3;  // tries of an event the receiver rejects
  // Whether this node may send now (the cluster's leader); none: always.
  std::function<bool()> may_send = {};
  std::function<void()> on_sent = {};      // celos_openlineage_sent_total
  std::function<void()> on_rejected = {};  // celos_openlineage_dropped_total{reason="rejected"}
};

// Sends the spool's events, oldest first, on its own thread (or, in tests, by send_due).
class LineageSender {
 public:
  LineageSender(LineageSpool& spool, std::unique_ptr<LineageTransport> transport,
                LineageSenderOptions options, bool start_thread = true);
  ~LineageSender();
  LineageSender(const LineageSender&) = delete;
  LineageSender& operator=(const LineageSender&) = delete;

  // Sends what is pending at `now` until the spool is empty or the transport fails; returns when
  // to try again (nothing: when new events come).
  std::optional<std::chrono::milliseconds> send_due();
  void wake();
  void stop();  // idempotent; unsent events stay in the spool

 private:
  void loop();
  // One event: true to go on with the next.
  bool send_one(const SpoolEntry& entry, std::vector<std::uint64_t>& done);

  LineageSpool& spool_;
  std::unique_ptr<LineageTransport> transport_;
  LineageSenderOptions options_;
  Clock& clock_;
  std::chrono::milliseconds backoff_{0};
  std::map<std::uint64_t, int> rejections_;  // by seq, on the sender's thread only
  Mutex mutex_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  bool woken_ GUARDED_BY(mutex_) = true;  // what the spool holds from before goes first
  std::thread thread_;
};

}  // namespace celos
