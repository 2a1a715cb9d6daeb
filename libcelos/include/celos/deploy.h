// celos-ci: deploying a workflow project to a Celos installation (SPEC §8).
//
// A deployment directory holds `workflow.js`, `defaults.js` and `hdfs/` (the Oozie application
// directory). Deploy puts them at
//   workflow.js -> <workflows.dir.uri>/NAME.js
//   defaults.js -> <defaults.dir.uri>/NAME.js
//   hdfs/       -> <hdfsRoot>/NAME            (replacing what was there)
// where the target file (JSON, read from a `file:` or `sftp:` URL) names the two directories and
// the Hadoop configuration that locates HDFS. Undeploy removes the three.
//
// Guarantees: all JavaScript is syntax-checked before anything remote is touched; the HDFS
// directory is uploaded to a temporary sibling and swapped in; the JS files are replaced
// atomically (temporary name, rename); a failure at any point rolls back to the previous
// deployment, and running the same deploy twice gives the same result.
//
// Everything here talks to the outside world only through FileSystem and the Opener below, so
// it is tested with in-memory file systems. Not thread-safe: one deploy at a time.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "celos/error.h"
#include "celos/file_system.h"
#include "celos/time.h"

namespace celos {

// ---- command line

enum class DeployMode { kDeploy, kUndeploy };

struct CiOptions {
  DeployMode mode = DeployMode::kDeploy;
  std::string workflow_name;
  std::string target_url;
  std::string deploy_dir = ".";
  std::string hdfs_root = "/user/celos/app";
  bool accept_new_host_key = false;
  bool plan = false;  // --plan: report what a deploy would change, deploy nothing
};

// What the command line asked for: options to run, or the help text to print (exit 0).
struct CiCommandLine {
  std::optional<CiOptions> options;
  std::string help;
};

// Parses and validates celos-ci's arguments (argv[0] is the program name). Errors are kInvalid
// with one line that says what is wrong (missing --workflowName, --hdfsRoot not absolute or
// ending in `/`, unknown mode, a workflow name that is not a plain file name, ...). The
// deployment directory itself is checked by read_deployment().
[[nodiscard]] Result<CiCommandLine> parse_ci_command_line(int argc, const char* const* argv);

// ---- target file and URLs

// A `file:` or `sftp:` URL: `file:///abs/path`, `file:/abs/path`,
// `sftp://[user@]host[:port]/abs/path`. `user` is empty when the URL names none.
struct Location {
  enum class Scheme { kFile, kSftp };
  Scheme scheme = Scheme::kFile;
  std::string user;
  std::string host;
  int port = 22;
  std::string path;  // absolute, without a trailing slash (except "/")
};

// kInvalid for anything else (other schemes, relative paths, bad ports).
[[nodiscard]] Result<Location> parse_location(std::string_view url);
// The location joined with a child name ("a/b" style, no leading slash).
Location child_location(const Location& parent, std::string_view relative);
std::string to_string(const Location& location);

struct DeployTarget {
  std::string hdfs_site_url;      // hadoop.hdfs-site.xml
  std::string core_site_url;      // hadoop.core-site.xml
  std::string defaults_dir_url;   // defaults.dir.uri
  std::string workflows_dir_url;  // workflows.dir.uri
};

// Parses a target file (JSON object; comments and trailing commas tolerated as in the manual's
// example). kInvalid naming the missing key or the value that is not a file:/sftp: URL.
[[nodiscard]] Result<DeployTarget> parse_deploy_target(std::string_view json,
                                                       std::string_view source_name);

// Opens the file system that serves a location (the local one for `file:`, an SFTP connection
// for `sftp:`; implementations reuse one connection per user, host and port).
class LocationOpener {
 public:
  virtual ~LocationOpener() = default;
  [[nodiscard]] virtual Result<std::shared_ptr<FileSystem>> open(const Location& location) = 0;
};

// The real opener: make_local_file_system() and SFTP (celos/sftp.h) with the user's keys and
// known_hosts under `home`; `default_user` for sftp: URLs without a user.
std::unique_ptr<LocationOpener> make_location_opener(std::string home, std::string default_user,
                                                     bool accept_new_host_key);

// Reads a whole `file:`/`sftp:` URL through an opener.
[[nodiscard]] Result<std::string> fetch_url(LocationOpener& opener, std::string_view url);

// ---- the deployment directory

struct DeployFile {
  std::string relative_path;  // under hdfs/, `/`-separated
  std::string data;
};

struct Deployment {
  std::optional<std::string> workflow_js;  // absent when the directory has no workflow.js
  std::optional<std::string> defaults_js;
  std::vector<DeployFile> hdfs_files;  // sorted by path
  std::vector<std::string> hdfs_dirs;  // every directory under hdfs/ (also empty ones)
};

// Reads `<dir>/workflow.js`, `<dir>/defaults.js` and the tree under `<dir>/hdfs/` (absolute
// `dir`) from `fs`. kInvalid when `hdfs/` is missing or neither JS file is there.
[[nodiscard]] Result<Deployment> read_deployment(FileSystem& fs, const std::string& dir);

// Compiles a JavaScript source with Duktape without running it. kInvalid with
// "<name>:<line>: <message>" on a syntax error.
[[nodiscard]] Result<void> check_javascript_syntax(std::string_view name, std::string_view source);

// ---- planning and running

// Where one deploy puts things: three file systems (possibly the same object) and paths.
struct DeployPlan {
  std::string workflow_name;
  std::shared_ptr<FileSystem> workflows_fs;
  std::string workflow_js_path;  // <workflows dir>/NAME.js
  std::shared_ptr<FileSystem> defaults_fs;
  std::string defaults_js_path;  // <defaults dir>/NAME.js
  std::shared_ptr<FileSystem> hdfs_fs;
  std::string hdfs_root;
  std::string hdfs_dir;  // <hdfsRoot>/NAME
};

// Resolves the target's directories through `opener` into a plan; `hdfs_fs` is the HDFS side
// (WebHDFS or the local file system, see run_ci).
[[nodiscard]] Result<DeployPlan> make_deploy_plan(const CiOptions& options,
                                                  const DeployTarget& target,
                                                  LocationOpener& opener,
                                                  std::shared_ptr<FileSystem> hdfs_fs);

// What a deploy tells the user. Uploads report each file after it is written.
class DeployReporter {
 public:
  virtual ~DeployReporter() = default;
  virtual void step(std::string_view message) = 0;
  virtual void uploaded(std::string_view path, std::uint64_t bytes, std::size_t files_done,
                        std::size_t files_total, std::uint64_t bytes_done,
                        std::uint64_t bytes_total) = 0;
  virtual void finish() = 0;
};

// One plain line per event on `out` (Jenkins), or a progress line redrawn in place (terminal).
std::unique_ptr<DeployReporter> make_log_reporter(std::FILE* out);
std::unique_ptr<DeployReporter> make_terminal_reporter(std::FILE* out);

// Randomness for temporary names, injectable for tests.
using RandomSuffix = std::function<std::string()>;
std::string random_suffix();

// Deploys: syntax check, HDFS upload to `<hdfsRoot>/.NAME.tmp-<suffix>`, swap, JS files, then
// cleanup. On failure, what was changed is rolled back and the error says what failed (and, if
// the rollback failed too, where the previous deployment now is).
[[nodiscard]] Result<void> deploy(const DeployPlan& plan, const Deployment& deployment,
                                  DeployReporter& reporter,
                                  const RandomSuffix& suffix = random_suffix);

// Removes NAME.js from both directories and `<hdfsRoot>/NAME`. Missing pieces are fine.
[[nodiscard]] Result<void> undeploy(const DeployPlan& plan, DeployReporter& reporter);

// celos-ci --plan: instead of deploying, reports (one step a line) what the deployment would
// change in the target's next 7 days from `now` (celos plan, celos/simulate.h): slots added,
// removed and moved, and changed triggers, services, schedules and datasets. Reads the deployed
// NAME.js and the target's defaults; writes nothing. Returns whether anything changes.
[[nodiscard]] Result<bool> plan_deploy(const DeployPlan& plan, const Deployment& deployment,
                                       Time now, DeployReporter& reporter);

// The whole of celos-ci after argument parsing: reads the target and its Hadoop configuration
// through `opener`, reads the deployment directory from `local`, plans and runs. `hdfs_user`
// is sent to WebHDFS as user.name.
[[nodiscard]] Result<void> run_ci(const CiOptions& options, LocationOpener& opener,
                                  FileSystem& local, const std::string& hdfs_user,
                                  DeployReporter& reporter);

}  // namespace celos
