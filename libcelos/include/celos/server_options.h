// celos-server's command line (SPEC §8, §11, §16). Parsing and start-up checks live in the
// library so that every rejection ("a clear message and a non-zero exit") is unit-tested;
// celos-server/main.cc only wires things together.
//
// Adding a flag: a member here, a line in describe_server_options() and a line in
// server_options_from() (libcelos/src/web/server_command_line.cc), a test beside it, and a row
// in docs/command-line.md.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "celos/error.h"

namespace celos {

struct ServerOptions {
  int port = -1;
  std::string host = "127.0.0.1";
  // Directories, always absolute (relative ones are resolved against the directory the server
  // was started in: the command service's job wrapper changes directory).
  std::string workflows_dir = "/etc/celos/workflows";
  std::string defaults_dir = "/etc/celos/defaults";
  std::string logs_dir = "/var/log/celos";
  std::string db_dir = "/var/lib/celos/db";
  // --jobs-dir: the job directories of command and Slurm jobs (SPEC §11; in a cluster, storage
  // every node mounts). Empty: <db_dir>/jobs.
  std::string jobs_dir;
  std::string jobs_directory() const { return jobs_dir.empty() ? db_dir + "/jobs" : jobs_dir; }
  std::string hadoop_conf_dir = "/etc/hadoop/conf";
  bool hadoop_conf_given = false;  // an explicit --hadoop-conf must exist; the default may not
  bool create_db = false;          // --create-db: create a missing --db (first installs)
  int auto_schedule_seconds = 0;   // 0 = no automatic stepping
  // --oozie-notifications=false: submitted Oozie jobs get no notification URL (issue 28; for
  // Oozie servers that cannot reach celos). Only with --autoSchedule.
  bool oozie_notifications = true;
  // --data-check-backoff: one step of the back-off of data checks (issue 28, DataCheckBackoff in
  // celos/scheduler.h); 0 = off; -1 (not given) = the --autoSchedule period, off without it.
  int data_check_backoff_seconds = -1;
  int data_check_backoff_step() const {
    return data_check_backoff_seconds >= 0 ? data_check_backoff_seconds : auto_schedule_seconds;
  }
  // SPEC §10: external calls of a step in flight at once (1..1024; 1 = one at a time), and the
  // bound of each call in seconds (> 0): Oozie, WebHDFS, Slurm commands, kills from the API.
  int io_concurrency = 32;
  double io_timeout_seconds = 30;
  // --allowed-hosts a,b ('*' = any); empty = the default list (celos/host_check.h).
  std::string allowed_hosts;
  // --auth-tokens FILE (absolute; empty = no authentication) and --auth-reads (SPEC §13).
  std::string auth_tokens;
  bool auth_reads = false;
  // --slurm-bin: the directory of sbatch, squeue, scontrol, scancel, sacct; empty = PATH.
  std::string slurm_bin_dir;
  // --notify-webhook URL (repeatable): notified of FAILURE and WAIT_TIMEOUT of every workflow.
  std::vector<std::string> notify_webhooks;
  // --allow-loopback-webhooks: webhooks may call loopback and this server (celos/webhook_guard.h).
  bool allow_loopback_webhooks = false;
  // --audit-keep-days: days of audit trail kept (rolled audit.log files; rows of the table).
  int audit_keep_days = 90;
  // State backends and the cluster (SPEC §11, §16).
  std::string state_db;                // --state-db URI; empty = file:<db_dir>
  std::string import_db_dir;           // --import-db DIR: copy DIR into --state-db and exit
  bool force = false;                  // --force: --import-db empties a non-empty target first
  std::string node_id;                 // --node-id; empty = <hostname>:<port>
  std::string advertise_url;           // --advertise-url; empty = http://<host>:<port>
  int lease_seconds = 10;              // --lease-seconds
  std::string cluster_name = "celos";  // --cluster-name
  // --history-retention-days: slot history older than this is pruned by the leader, at most
  // once an hour (StateDatabase::prune_history); 0 = kept forever.
  int history_retention_days = 30;
  // The most slots one backfill plan may cover (--max-backfill-slots; celos/backfill.h).
  std::size_t max_backfill_slots = 1'000'000;
  // OpenLineage (issue 32; celos/lineage.h): the collector's URL (--openlineage-url) and a file
  // holding its bearer token (--openlineage-token-file), or a file of JSON lines instead
  // (--openlineage-file); the jobs' namespace (--openlineage-namespace; empty: --cluster-name).
  std::string openlineage_url;
  std::string openlineage_token_file;
  std::string openlineage_file;
  std::string openlineage_namespace;
  bool lineage_enabled() const { return !openlineage_url.empty() || !openlineage_file.empty(); }

  // The state database URI to open: --state-db, or file:<db_dir>.
  std::string state_db_uri() const { return state_db.empty() ? "file:" + db_dir : state_db; }
  bool uses_postgres() const { return !state_db.empty() && state_db.rfind("file:", 0) != 0; }
};

// What the command line asked for: options to run, or a text to print and exit 0 (--help,
// --version).
struct ServerCommandLine {
  std::optional<ServerOptions> options;
  std::string print;
};

// Parses and validates celos-server's arguments (argv[0] is the program name). Errors are
// kInvalid with one line (no newline) that names the flag; the caller exits 2.
// `version` is printed for --version.
[[nodiscard]] Result<ServerCommandLine> parse_server_command_line(int argc, const char* const* argv,
                                                                  const std::string& version);

// Start-up checks of the directories (exit 2 on failure, one line naming the directory):
// workflows, defaults and an explicit --hadoop-conf must exist; the logs directory is created
// when its parent exists; a missing --db is refused unless --create-db (a mistyped --db must
// never start a scheduler on an empty state).
[[nodiscard]] Result<void> prepare_server_directories(const ServerOptions& options);

// `path` made absolute against the current directory and normalised ("" stays "").
std::string absolute_directory(const std::string& path);

}  // namespace celos
