// A FileSystem over the WebHDFS REST API (http://<namenode>/webhdfs/v1/<path>?op=...).
//
// HA: requests go to the name node that last answered; when it says it is standby (403 with a
// StandbyException, as Hadoop answers) or cannot be reached, the next one is tried, and the
// one that answers becomes the one asked first next time.
#include <algorithm>
#include <atomic>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/hadoop.h"
#include "celos/utf8.h"

namespace celos {

namespace {

namespace json = boost::json;

// Percent-encodes each path segment, keeping the slashes.
std::string encode_path(std::string_view path) {
  std::string out;
  while (!path.empty()) {
    auto slash = path.find('/');
    out += url_encode(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    out += '/';
    path.remove_prefix(slash + 1);
  }
  return out;
}

// The RemoteException of a WebHDFS error body: "java.io.FileNotFoundException: File does not
// exist: /x", or the raw body (shortened) when it is not one.
std::string remote_exception(const std::string& body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (!ec && v.is_object()) {
    if (const json::value* e = v.as_object().if_contains("RemoteException"); e && e->is_object()) {
      const json::object& o = e->as_object();
      auto text = [&](const char* key) -> std::string {
        const json::value* f = o.if_contains(key);
        return f && f->is_string() ? std::string(f->as_string()) : "";
      };
      std::string cls = text("javaClassName");
      if (cls.empty()) cls = text("exception");
      return fmt::format("{}: {}", cls, text("message"));
    }
  }
  return clipped(body, 200);
}

bool is_standby(const HttpResponse& response) {
  // A standby name node answers 403 StandbyException; one that is starting up or in safe mode
  // may answer RetriableException. Either way another name node may serve the request.
  return (response.status == 403 || response.status == 503) &&
         (response.body.find("StandbyException") != std::string::npos ||
          response.body.find("RetriableException") != std::string::npos);
}

Result<json::value> parse_json(const HttpResponse& response, const std::string& what) {
  boost::system::error_code ec;
  json::value v = json::parse(response.body, ec);
  if (ec) return fail(fmt::format("{}: answer is not JSON: {}", what, ec.message()));
  return v;
}

// {"boolean": true}
Result<bool> boolean_answer(const HttpResponse& response, const std::string& what) {
  auto v = parse_json(response, what);
  if (!v) return tl::unexpected(v.error());
  if (v->is_object()) {
    if (const json::value* b = v->as_object().if_contains("boolean"); b && b->is_bool()) {
      return b->as_bool();
    }
  }
  return fail(fmt::format("{}: answer has no \"boolean\": {}", what, response.body));
}

class WebHdfsFileSystem : public FileSystem {
 public:
  WebHdfsFileSystem(std::shared_ptr<HttpClient> http, std::vector<std::string> namenodes,
                    std::string user)
      : http_(std::move(http)), namenodes_(std::move(namenodes)), user_(std::move(user)) {}

  Result<bool> exists(const std::string& path) override {
    auto r = call("GET", path, "GETFILESTATUS");
    if (!r) return tl::unexpected(r.error());
    if (r->status == 200) return true;
    if (r->status == 404) return false;
    return unexpected_answer("GETFILESTATUS", path, *r);
  }

  Result<std::string> read(const std::string& path) override {
    // The name node redirects OPEN to a data node that has the blocks.
    auto r = call("GET", path, "OPEN", "", "", true);
    if (!r) return tl::unexpected(r.error());
    if (r->status == 200) return std::move(r->body);
    if (r->status == 404) {
      return fail(fmt::format("WebHDFS: {} does not exist", path), ErrorCode::kNotFound);
    }
    return unexpected_answer("OPEN", path, *r);
  }

  Result<void> write_files(const std::vector<FileWrite>& files) override {
    // WebHDFS has no atomic replace (RENAME never overwrites), so each file is written in
    // place with overwrite=true; HDFS makes the file visible only once it is closed.
    for (const FileWrite& file : files) {
      if (auto ok = create(file); !ok) return ok;
    }
    return {};
  }

  Result<void> make_dirs(const std::string& path) override {
    return expect_true("PUT", path, "MKDIRS", "", "cannot create directory");
  }

  Result<void> remove(const std::string& path) override {
    auto r = call("DELETE", path, "DELETE", "&recursive=true");
    if (!r) return tl::unexpected(r.error());
    // {"boolean": false} means nothing was there, which is fine for remove().
    if (r->status == 200 || r->status == 404) return {};
    return unexpected_answer("DELETE", path, *r);
  }

  Result<void> rename(const std::string& from, const std::string& to) override {
    return expect_true("PUT", from, "RENAME", "&destination=" + url_encode(to),
                       fmt::format("cannot rename to {}", to));
  }

  // A name node round trip per call: a directory's waiting paths go in one LISTSTATUS.
  bool prefers_listing() const override { return true; }

  Result<std::vector<FileStatus>> list(const std::string& directory) override {
    auto r = call("GET", directory, "LISTSTATUS");
    if (!r) return tl::unexpected(r.error());
    if (r->status == 404) {
      return fail(fmt::format("WebHDFS: {} does not exist", directory), ErrorCode::kNotFound);
    }
    if (r->status != 200) return unexpected_answer("LISTSTATUS", directory, *r);
    std::string what = fmt::format("WebHDFS LISTSTATUS {}", directory);
    auto v = parse_json(*r, what);
    if (!v) return tl::unexpected(v.error());
    const json::value* entries = nullptr;
    if (v->is_object()) {
      if (const json::value* s = v->as_object().if_contains("FileStatuses"); s && s->is_object()) {
        entries = s->as_object().if_contains("FileStatus");
      }
    }
    if (entries == nullptr || !entries->is_array()) {
      return fail(fmt::format("{}: no FileStatuses.FileStatus in {}", what, r->body));
    }
    std::vector<FileStatus> out;
    for (const json::value& e : entries->as_array()) {
      if (!e.is_object()) continue;
      const json::object& o = e.as_object();
      FileStatus status;
      if (const json::value* n = o.if_contains("pathSuffix"); n && n->is_string()) {
        status.name = std::string(n->as_string());
      }
      if (const json::value* t = o.if_contains("type"); t && t->is_string()) {
        status.is_directory = t->as_string() == "DIRECTORY";
      }
      const json::value* l = o.if_contains("length");
      if (l && l->is_int64() && l->get_int64() >= 0) {
        status.size = static_cast<std::uint64_t>(l->get_int64());
      } else if (l && l->is_uint64()) {
        status.size = l->get_uint64();
      }
      // LISTSTATUS of a file answers the file itself with an empty pathSuffix.
      if (status.name.empty()) {
        return fail(fmt::format("{}: not a directory", what), ErrorCode::kInvalid);
      }
      out.push_back(std::move(status));
    }
    std::sort(out.begin(), out.end(),
              [](const FileStatus& a, const FileStatus& b) { return a.name < b.name; });
    return out;
  }

 private:
  // One WebHDFS operation on the name nodes, with failover. Any HTTP answer other than
  // "standby" is the answer; transport failures and standby answers move on to the next node.
  Result<HttpResponse> call(const std::string& method, const std::string& path,
                            const std::string& op, const std::string& extra = "",
                            const std::string& body = "", bool follow_redirects = false) {
    if (namenodes_.empty()) return fail("WebHDFS: no name node configured", ErrorCode::kInvalid);
    std::vector<std::string> failures;
    size_t first = active_.load();
    for (size_t i = 0; i < namenodes_.size(); ++i) {
      size_t index = (first + i) % namenodes_.size();
      HttpRequest request;
      request.method = method;
      request.url = fmt::format("http://{}/webhdfs/v1{}?op={}{}{}", namenodes_[index],
                                encode_path(path), op, user_param(), extra);
      request.body = body;
      request.follow_redirects = follow_redirects;
      auto response = http_->send(request);
      if (!response) {
        failures.push_back(response.error().message);
        continue;
      }
      if (is_standby(*response)) {
        failures.push_back(fmt::format("{} {}: standby ({})", method, request.url,
                                       remote_exception(response->body)));
        continue;
      }
      active_.store(index);
      return response;
    }
    return fail(fmt::format("WebHDFS {} {}: no active name node answered: {}", op, path,
                            fmt::join(failures, "; ")),
                ErrorCode::kUnavailable);
  }

  Result<void> create(const FileWrite& file) {
    // Step 1: the name node answers 307 with the data node to send the bytes to.
    auto r = call("PUT", file.path, "CREATE", "&overwrite=true");
    if (!r) return tl::unexpected(r.error());
    if (r->status == 201) return {};  // a gateway (HttpFS) that took no data: nothing to send
    std::string location = r->header("Location");
    if (r->status != 307 || location.empty()) {
      return unexpected_answer("CREATE", file.path, *r);
    }
    // Step 2: the data.
    HttpRequest put;
    put.method = "PUT";
    put.url = location;
    put.headers = {{"Content-Type", "application/octet-stream"}};
    put.body = file.data;
    auto written = http_->send(put);
    if (!written) return tl::unexpected(written.error());
    if (written->status != 201 && written->status != 200) {
      return unexpected_answer("CREATE (data node)", file.path, *written);
    }
    return {};
  }

  Result<void> expect_true(const std::string& method, const std::string& path,
                           const std::string& op, const std::string& extra,
                           const std::string& refusal) {
    auto r = call(method, path, op, extra);
    if (!r) return tl::unexpected(r.error());
    if (r->status != 200) return unexpected_answer(op, path, *r);
    std::string what = fmt::format("WebHDFS {} {}", op, path);
    auto answer = boolean_answer(*r, what);
    if (!answer) return tl::unexpected(answer.error());
    if (!*answer) return fail(fmt::format("{}: {}", what, refusal));
    return {};
  }

  std::string user_param() const { return user_.empty() ? "" : "&user.name=" + url_encode(user_); }

  static tl::unexpected<Error> unexpected_answer(const std::string& op, const std::string& path,
                                                 const HttpResponse& r) {
    return fail(
        fmt::format("WebHDFS {} {}: HTTP {}: {}", op, path, r.status, remote_exception(r.body)));
  }

  std::shared_ptr<HttpClient> http_;
  std::vector<std::string> namenodes_;
  std::string user_;
  std::atomic<size_t> active_{0};  // index of the name node that answered last
};

}  // namespace

std::shared_ptr<FileSystem> make_webhdfs_file_system(std::shared_ptr<HttpClient> http,
                                                     std::vector<std::string> namenodes,
                                                     std::string user) {
  return std::make_shared<WebHdfsFileSystem>(std::move(http), std::move(namenodes),
                                             std::move(user));
}

}  // namespace celos
