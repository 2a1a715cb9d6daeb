// celos-ci end to end: target file, Hadoop configuration, connections, then deploy or undeploy.
// Kept apart from deploy.cc because this is where the real adapters (SFTP, WebHDFS, the local
// disk) are chosen; deploy.cc only sees FileSystem.
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "celos/clock.h"
#include "celos/deploy.h"
#include "celos/hadoop.h"
#include "celos/http_client.h"
#include "celos/sftp.h"

namespace celos {

namespace {

class RealLocationOpener : public LocationOpener {
 public:
  RealLocationOpener(std::string home, std::string default_user, bool accept_new_host_key)
      : home_(std::move(home)),
        default_user_(std::move(default_user)),
        accept_new_host_key_(accept_new_host_key) {}

  Result<std::shared_ptr<FileSystem>> open(const Location& location) override {
    if (location.scheme == Location::Scheme::kFile) {
      if (!local_) local_ = make_local_file_system();
      return local_;
    }
    SftpEndpoint endpoint{location.user.empty() ? default_user_ : location.user, location.host,
                          location.port};
    if (endpoint.user.empty()) {
      return fail(fmt::format("no user for {}: put one in the URL or set CELOS_CI_USERNAME",
                              to_string(location)),
                  ErrorCode::kInvalid);
    }
    const std::string key = fmt::format("{}@{}:{}", endpoint.user, endpoint.host, endpoint.port);
    if (auto it = connections_.find(key); it != connections_.end()) return it->second;
    SftpOptions options;
    options.home = home_;
    options.accept_new_host_key = accept_new_host_key_;
    auto fs = connect_sftp_file_system(endpoint, options);
    if (!fs) return tl::unexpected(fs.error());
    connections_.emplace(key, *fs);
    return *fs;
  }

 private:
  std::string home_;
  std::string default_user_;
  bool accept_new_host_key_;
  std::shared_ptr<FileSystem> local_;
  std::map<std::string, std::shared_ptr<FileSystem>> connections_;
};

// The HDFS side named by fs.defaultFS: the local disk for file: (single-host set-ups and tests),
// WebHDFS for hdfs:// (name node HTTP addresses from the configuration) and webhdfs://.
Result<std::shared_ptr<FileSystem>> open_hdfs(const HadoopConfig& config, const std::string& user) {
  const std::string default_fs = config.get("fs.defaultFS", config.get("fs.default.name"));
  if (default_fs.empty()) {
    return fail("the target's core-site.xml sets no fs.defaultFS", ErrorCode::kInvalid);
  }
  if (default_fs.starts_with("file:")) return make_local_file_system();
  auto authority_of = [](std::string_view uri, std::size_t scheme_size) {
    std::string_view rest = uri.substr(scheme_size);
    return std::string(rest.substr(0, rest.find('/')));
  };
  std::vector<std::string> namenodes;
  if (default_fs.starts_with("hdfs://")) {
    auto addresses = namenode_http_addresses(config, authority_of(default_fs, 7));
    if (!addresses) return tl::unexpected(addresses.error());
    namenodes = std::move(*addresses);
  } else if (default_fs.starts_with("webhdfs://")) {
    namenodes.push_back(authority_of(default_fs, 10));
  } else {
    return fail(
        fmt::format("fs.defaultFS '{}' is neither file:, hdfs:// nor webhdfs://", default_fs),
        ErrorCode::kInvalid);
  }
  if (namenodes.empty()) return fail("no name node address for " + default_fs);
  return make_webhdfs_file_system(make_curl_http_client(), std::move(namenodes), user);
}

Result<std::shared_ptr<FileSystem>> open_hdfs_of(const DeployTarget& target, LocationOpener& opener,
                                                 const std::string& user) {
  HadoopConfig config;
  for (const std::string& url : {target.core_site_url, target.hdfs_site_url}) {
    auto xml = fetch_url(opener, url);
    if (!xml) return tl::unexpected(xml.error());
    if (auto ok = merge_hadoop_config_xml(config, *xml, url); !ok) {
      return tl::unexpected(ok.error());
    }
  }
  return open_hdfs(config, user);
}

std::string absolute_dir(const std::string& dir) {
  std::error_code ec;
  auto path = std::filesystem::absolute(dir, ec);
  return ec ? dir : path.lexically_normal().string();
}

}  // namespace

std::unique_ptr<LocationOpener> make_location_opener(std::string home, std::string default_user,
                                                     bool accept_new_host_key) {
  return std::make_unique<RealLocationOpener>(std::move(home), std::move(default_user),
                                              accept_new_host_key);
}

Result<void> run_ci(const CiOptions& options, LocationOpener& opener, FileSystem& local,
                    const std::string& hdfs_user, DeployReporter& reporter) {
  // The local side first: a broken deployment directory or bad JavaScript fails before any
  // connection is made.
  Deployment deployment;
  if (options.mode == DeployMode::kDeploy) {
    std::string dir = absolute_dir(options.deploy_dir);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    auto read = read_deployment(local, dir);
    if (!read) return tl::unexpected(read.error());
    deployment = std::move(*read);
    if (deployment.defaults_js) {
      auto ok = check_javascript_syntax("defaults.js", *deployment.defaults_js);
      if (!ok)
        return fail("JavaScript syntax error, nothing deployed: " + ok.error().message,
                    ErrorCode::kInvalid);
    }
    if (deployment.workflow_js) {
      auto ok = check_javascript_syntax("workflow.js", *deployment.workflow_js);
      if (!ok)
        return fail("JavaScript syntax error, nothing deployed: " + ok.error().message,
                    ErrorCode::kInvalid);
    }
  }
  auto target_json = fetch_url(opener, options.target_url);
  if (!target_json) return tl::unexpected(target_json.error());
  auto target = parse_deploy_target(*target_json, options.target_url);
  if (!target) return tl::unexpected(target.error());
  auto hdfs = open_hdfs_of(*target, opener, hdfs_user);
  if (!hdfs) return tl::unexpected(hdfs.error());
  auto plan = make_deploy_plan(options, *target, opener, std::move(*hdfs));
  if (!plan) return tl::unexpected(plan.error());
  if (options.mode == DeployMode::kUndeploy) return undeploy(*plan, reporter);
  if (options.plan) {
    auto changed = plan_deploy(*plan, deployment, system_clock().now(), reporter);
    if (!changed) return tl::unexpected(changed.error());
    return {};
  }
  return deploy(*plan, deployment, reporter);
}

}  // namespace celos
