// The FileSystemResolver of celos-server: hdfsCheckTrigger's `fs` argument (or
// CELOS_DEFAULT_HDFS, or nothing) to a file system. Built file systems are cached per
// scheme://authority, so that the active name node learned by failover is remembered and
// connections are reused across steps.
#include <fmt/format.h>

#include "celos/hadoop.h"
#include "celos/mutex.h"

namespace celos {

namespace {

class HadoopFileSystemResolver : public FileSystemResolver {
 public:
  HadoopFileSystemResolver(HadoopConfig config, std::shared_ptr<HttpClient> http, std::string user)
      : config_(std::move(config)), http_(std::move(http)), user_(std::move(user)) {}

  Result<std::shared_ptr<FileSystem>> resolve(std::string_view uri_in) override {
    std::string uri(uri_in);
    if (uri.empty()) uri = config_.get("fs.defaultFS", "file:///");
    if (uri.empty()) uri = "file:///";

    if (uri.starts_with("file:"))
      return cached("file:",
                    [] { return Result<std::shared_ptr<FileSystem>>(make_local_file_system()); });

    auto scheme_end = uri.find("://");
    if (scheme_end == std::string::npos) {
      return fail(fmt::format("unsupported file system URI '{}' (want file:, hdfs:// or "
                              "webhdfs://)",
                              uri),
                  ErrorCode::kInvalid);
    }
    std::string scheme = uri.substr(0, scheme_end);
    std::string rest = uri.substr(scheme_end + 3);
    std::string authority = rest.substr(0, rest.find('/'));
    std::string key = scheme + "://" + authority;

    if (scheme == "hdfs") {
      return cached(key, [&]() -> Result<std::shared_ptr<FileSystem>> {
        auto namenodes = namenode_http_addresses(config_, authority);
        if (!namenodes) return tl::unexpected(namenodes.error());
        return make_webhdfs_file_system(http_, std::move(*namenodes), user_);
      });
    }
    if (scheme == "webhdfs") {
      if (authority.empty()) {
        return fail(fmt::format("'{}' has no host:port", uri), ErrorCode::kInvalid);
      }
      return cached(key, [&]() -> Result<std::shared_ptr<FileSystem>> {
        return make_webhdfs_file_system(http_, {authority}, user_);
      });
    }
    return fail(fmt::format("unsupported file system URI '{}' (want file:, hdfs:// or "
                            "webhdfs://)",
                            uri),
                ErrorCode::kInvalid);
  }

 private:
  template <class Build>
  Result<std::shared_ptr<FileSystem>> cached(const std::string& key, Build build) {
    MutexLock lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    auto fs = build();
    if (fs) cache_.emplace(key, *fs);  // an error is reported again on every call
    return fs;
  }

  HadoopConfig config_;
  std::shared_ptr<HttpClient> http_;
  std::string user_;
  Mutex mutex_;
  std::map<std::string, std::shared_ptr<FileSystem>> cache_ GUARDED_BY(mutex_);
};

}  // namespace

std::unique_ptr<FileSystemResolver> make_hadoop_file_system_resolver(
    HadoopConfig config, std::shared_ptr<HttpClient> http, std::string user) {
  return std::make_unique<HadoopFileSystemResolver>(std::move(config), std::move(http),
                                                    std::move(user));
}

}  // namespace celos
