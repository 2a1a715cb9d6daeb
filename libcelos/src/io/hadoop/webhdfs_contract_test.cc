// One FileSystem check routine run against the in-memory fake, the local disk and WebHDFS over
// real HTTP (the curl client talking to test/hadoop/fake_webhdfs.py on 127.0.0.1), so that the
// fakes and the real implementations keep agreeing.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include <catch2/catch.hpp>

#include "celos/hadoop.h"
#include "testing/fakes.h"
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
      std::string script = std::string(CELOS_SOURCE_DIR) + "/test/hadoop/fake_webhdfs.py";
      const char* argv[] = {"python3", script.c_str(), "--port", "0", "--root", root.c_str(),
                            standby ? "--standby" : nullptr, nullptr};
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

// The contract every FileSystem keeps, under the directory `base`.
void check_file_system_contract(FileSystem& fs, const std::string& base) {
  INFO("base " << base);
  REQUIRE(fs.make_dirs(base + "/dir/sub"));
  CHECK(*fs.exists(base + "/dir/sub"));
  CHECK_FALSE(*fs.exists(base + "/dir/nothing"));

  REQUIRE(fs.write_files({{base + "/dir/b.txt", "bee"}, {base + "/dir/a.txt", "a & é\n"},
                          {base + "/new/parent/c", ""}}));
  CHECK(*fs.read(base + "/dir/a.txt") == "a & é\n");
  CHECK(*fs.read(base + "/new/parent/c") == "");
  REQUIRE(fs.write(base + "/dir/b.txt", "replaced"));
  CHECK(*fs.read(base + "/dir/b.txt") == "replaced");
  auto missing = fs.read(base + "/dir/none");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kNotFound);

  auto entries = fs.list(base + "/dir");
  REQUIRE(entries);
  REQUIRE(entries->size() == 3);
  CHECK((*entries)[0].name == "a.txt");
  CHECK_FALSE((*entries)[0].is_directory);
  CHECK((*entries)[1].name == "b.txt");
  CHECK((*entries)[1].size == 8);
  CHECK((*entries)[2].name == "sub");
  CHECK((*entries)[2].is_directory);
  auto no_list = fs.list(base + "/nowhere");
  REQUIRE_FALSE(no_list);
  CHECK(no_list.error().code == ErrorCode::kNotFound);

  REQUIRE(fs.rename(base + "/dir/a.txt", base + "/dir/sub/moved.txt"));
  CHECK_FALSE(*fs.exists(base + "/dir/a.txt"));
  CHECK(*fs.read(base + "/dir/sub/moved.txt") == "a & é\n");

  REQUIRE(fs.remove(base + "/dir"));
  CHECK_FALSE(*fs.exists(base + "/dir/sub/moved.txt"));
  CHECK_FALSE(*fs.exists(base + "/dir"));
  CHECK(fs.remove(base + "/dir"));  // nothing there: fine
}

TEST_CASE("The file system contract holds for the in-memory fake") {
  celos::testing::MemFileSystem fs;
  check_file_system_contract(fs, "/base");
}

TEST_CASE("The file system contract holds for the local disk") {
  celos::testing::TempDir dir;
  check_file_system_contract(*make_local_file_system(), dir.path());
}

TEST_CASE("The file system contract holds for WebHDFS over HTTP against the fake name node") {
  celos::testing::TempDir dir;
  FakeWebHdfs namenode(dir.path(), false);
  auto fs = make_webhdfs_file_system(make_curl_http_client(), {namenode.address()}, "celos");
  check_file_system_contract(*fs, "/user/celos/a b");
}

TEST_CASE("WebHDFS over HTTP fails over from a standby name node to the active one") {
  celos::testing::TempDir dir;
  celos::testing::write_text_file(dir / "logs/_READY", "");
  FakeWebHdfs standby(dir.path(), true);
  FakeWebHdfs active(dir.path(), false);
  auto fs = make_webhdfs_file_system(make_curl_http_client(),
                                     {standby.address(), active.address()}, "");
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
