// WebHDFS over real HTTP (the curl client talking to test/hadoop/fake_webhdfs.py on 127.0.0.1):
// the FileSystem contract (testing/file_system_contract.h, also run for memory, the local disk
// and SFTP), fail-over between name nodes, a name node that is down.
#include <cstdio>
#include <cstring>

#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "celos/hadoop.h"
#include "testing/file_system_contract.h"
#include "testing/source_dir.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

// A fake_webhdfs.py process; its name node's host:port.
class FakeWebHdfs {
 public:
  FakeWebHdfs(const std::string& root, bool standby) {
    int out[2];
    REQUIRE(::pipe(out) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      ::close(out[1]);
      std::string script = ::celos::testing::source_dir() + "/test/hadoop/fake_webhdfs.py";
      const char* argv[] = {"python3",
                            script.c_str(),
                            "--port",
                            "0",
                            "--root",
                            root.c_str(),
                            standby ? "--standby" : nullptr,
                            nullptr};
      ::execvp("python3", const_cast<char* const*>(argv));
      ::_exit(127);
    }
    ::close(out[1]);
    FILE* in = ::fdopen(out[0], "r");
    char line[64] = {};
    char datanode_line[64] = {};
    // Both lines (name node and data node ports) are read before the pipe is closed, so the
    // fake never writes into a closed pipe.
    bool started = std::fgets(line, sizeof line, in) != nullptr &&
                   std::fgets(datanode_line, sizeof datanode_line, in) != nullptr;
    std::fclose(in);
    REQUIRE(started);
    address_ = "127.0.0.1:" + std::string(line, std::strlen(line) - 1);
  }
  ~FakeWebHdfs() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  const std::string& address() const { return address_; }

 private:
  pid_t pid_ = -1;
  std::string address_;
};

TEST_CASE("The file system contract holds for WebHDFS over HTTP against the fake name node") {
  celos::testing::TempDir dir;
  FakeWebHdfs namenode(dir.path(), false);
  auto fs = make_webhdfs_file_system(make_curl_http_client(), {namenode.address()}, "celos");
  testing::check_file_system_contract(
      *fs, "/user/celos/a b",
      {.rename_replaces_file = false, .mtimes = false, .prefers_listing = true});
}

TEST_CASE("WebHDFS over HTTP fails over from a standby name node to the active one") {
  celos::testing::TempDir dir;
  celos::testing::write_text_file(dir / "logs/_READY", "");
  FakeWebHdfs standby(dir.path(), true);
  FakeWebHdfs active(dir.path(), false);
  auto fs =
      make_webhdfs_file_system(make_curl_http_client(), {standby.address(), active.address()}, "");
  CHECK(*fs->exists("/logs/_READY"));
  CHECK_FALSE(*fs->exists("/logs/_NOT_YET"));
}

TEST_CASE("WebHDFS over HTTP reports a name node that is down as an error, not as missing") {
  std::string address;
  {
    celos::testing::TempDir dir;
    FakeWebHdfs gone(dir.path(), false);
    address = gone.address();
  }
  auto fs = make_webhdfs_file_system(make_curl_http_client(), {address}, "");
  auto r = fs->exists("/logs/_READY");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find(address) != std::string::npos);
}

}  // namespace
}  // namespace celos
