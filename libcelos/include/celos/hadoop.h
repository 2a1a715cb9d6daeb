// Hadoop integration: the Oozie external service (SPEC §7.1), WebHDFS file systems and the
// Hadoop configuration that locates them (SPEC §7.3).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "celos/error.h"
#include "celos/external_service.h"
#include "celos/file_system.h"
#include "celos/http_client.h"
#include "celos/time.h"

namespace celos {

// The properties of a Hadoop configuration directory or file set (core-site.xml,
// hdfs-site.xml): name -> value.
struct HadoopConfig {
  std::map<std::string, std::string> properties;
  // Properties marked <final>true</final>: later files cannot override them (as in Hadoop).
  std::set<std::string> final_names;
  // The value with ${other.property} references expanded (as Hadoop does), or `fallback` when
  // the property is not set.
  std::string get(const std::string& name, const std::string& fallback = "") const;
};

// Parses one Hadoop `<configuration><property><name/><value/></property>...` XML document and
// merges it into `config` (later files override earlier ones).
[[nodiscard]] Result<void> merge_hadoop_config_xml(HadoopConfig& config, std::string_view xml,
                                                   std::string_view source_name);
// Reads core-site.xml and hdfs-site.xml from a directory (missing files are fine).
[[nodiscard]] Result<HadoopConfig> read_hadoop_config_dir(const std::string& directory);

// The name node HTTP addresses (`host:port`) for an `hdfs://authority` in this configuration,
// in failover order: a plain host:port maps to dfs.namenode.http-address (or host:9870), a name
// service to every dfs.namenode.http-address.<ns>.<nn> of dfs.ha.namenodes.<ns>.
[[nodiscard]] Result<std::vector<std::string>> namenode_http_addresses(
    const HadoopConfig& config, std::string_view hdfs_authority);

// A WebHDFS file system over the given name nodes (failover to the next one when a name node
// is standby or down), for `user` (user.name, may be empty).
std::shared_ptr<FileSystem> make_webhdfs_file_system(std::shared_ptr<HttpClient> http,
                                                     std::vector<std::string> namenodes,
                                                     std::string user);

// A resolver for hdfsCheckTrigger that knows `file:`, `hdfs://` (through `config`) and
// `webhdfs://host:port`; the empty URI means config's fs.defaultFS (or file:/// if unset).
std::unique_ptr<FileSystemResolver> make_hadoop_file_system_resolver(
    HadoopConfig config, std::shared_ptr<HttpClient> http, std::string user);

// The Oozie job property naming the URL Oozie calls (GET, `$jobId` and `$status` substituted)
// when the workflow job changes state (issue 28).
inline constexpr std::string_view kOozieNotificationProperty = "oozie.wf.workflow.notification.url";

struct OozieServiceOptions {
  std::string url;                                // e.g. http://oozie:11000/oozie
  std::map<std::string, std::string> properties;  // after defaults and workflow properties merged
  std::string user;                               // user.name, may be empty
};

// Builds the final property set for a slot as SPEC §7.1 says: defaults, overridden by the
// workflow's properties (time variables replaced), overridden by year..second and
// celosWorkflowName.
std::map<std::string, std::string> oozie_slot_properties(
    const std::map<std::string, std::string>& defaults,
    const std::map<std::string, std::string>& workflow_properties, const std::string& workflow_id,
    Time slot_time);

// The Oozie external service. `properties_for_slot` returns the workflow's own properties for
// a slot (a JS function may compute them); the service merges defaults and slot variables.
using OoziePropertiesFunction =
    std::function<Result<std::map<std::string, std::string>>(const SlotId&)>;
ExternalServicePtr make_oozie_external_service(std::shared_ptr<HttpClient> http, std::string url,
                                               std::map<std::string, std::string> defaults,
                                               OoziePropertiesFunction properties_for_slot,
                                               std::string user);

}  // namespace celos
