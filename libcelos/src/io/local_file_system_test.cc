// The local file system: the FileSystem contract (testing/file_system_contract.h, also run by
// the WebHDFS and SFTP tests) for it and for the in-memory fake, then its own batches and errors.
#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <sys/stat.h>

#include "celos/file_system.h"
#include "testing/fakes.h"
#include "testing/file_system_contract.h"
#include "testing/temp_dir.h"

using namespace celos;

using testing::check_file_system_contract;

TEST_CASE("the in-memory file system keeps the file system contract") {
  testing::MemFileSystem fs;
  check_file_system_contract(
      fs, "/root", {.rename_replaces_file = true, .mtimes = false, .prefers_listing = false});
}

TEST_CASE("the local file system keeps the file system contract") {
  testing::TempDir dir;
  auto fs = make_local_file_system();
  check_file_system_contract(
      *fs, dir / "base", {.rename_replaces_file = true, .mtimes = true, .prefers_listing = false});
}

TEST_CASE("a big batch of local writes leaves whole files and no temporary files") {
  testing::TempDir dir;
  auto fs = make_local_file_system();
  std::vector<FileWrite> batch;
  for (int i = 0; i < 100; ++i) batch.push_back({dir / ("d/" + std::to_string(i)), "v"});
  REQUIRE(fs->write_files(batch));
  auto entries = fs->list(dir / "d");
  REQUIRE(entries);
  CHECK(entries->size() == 100);
  for (const auto& e : *entries) CHECK(e.name[0] != '.');
}

namespace {
// The names under `root` (recursively) that are temporary files of a write.
std::vector<std::string> temporary_files(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.path().filename().string()[0] == '.') out.push_back(e.path().string());
  }
  return out;
}
}  // namespace

TEST_CASE(
    "a batch big enough for several threads replaces every file, the last write of a path "
    "winning") {
  testing::TempDir dir;
  auto fs = make_local_file_system();
  std::vector<FileWrite> batch;
  for (int i = 0; i < 1000; ++i) {
    batch.push_back({dir / fmt::format("w{}/{}", i % 100, i), fmt::format("old {}", i)});
  }
  REQUIRE(fs->write_files(batch));
  for (FileWrite& w : batch) w.data = "new" + w.data.substr(3);
  batch.push_back({dir / "w7/7", "newest 7"});
  REQUIRE(fs->write_files(batch));
  for (int i = 0; i < 1000; ++i) {
    CHECK(fs->read(dir / fmt::format("w{}/{}", i % 100, i)).value() ==
          (i == 7 ? std::string("newest 7") : fmt::format("new {}", i)));
  }
  CHECK(temporary_files(dir.path()).empty());
}

TEST_CASE(
    "a big batch with one path that cannot be written is an error naming it, no temporary file "
    "left") {
  testing::TempDir dir;
  auto fs = make_local_file_system();
  REQUIRE(fs->write(dir / "w3/blocked/inside", "x"));  // w3/blocked is a directory
  std::vector<FileWrite> batch;
  for (int i = 0; i < 600; ++i) batch.push_back({dir / fmt::format("w{}/{}", i % 10, i), "v"});
  batch.push_back({dir / "w3/blocked", "a file where a directory is"});
  auto written = fs->write_files(batch);
  REQUIRE_FALSE(written);
  CHECK_THAT(written.error().message, Catch::Contains(dir / "w3/blocked"));
  CHECK(temporary_files(dir.path()).empty());
  CHECK(fs->read(dir / "w3/blocked/inside").value() == "x");
}

TEST_CASE("a big batch of appends keeps each file's appends in order") {
  testing::TempDir dir;
  auto fs = make_local_file_system();
  std::vector<FileWrite> batch;
  for (int i = 0; i < 1240; ++i) {
    batch.push_back({dir / fmt::format("h{}/log", i % 31), fmt::format("{}\n", i)});
  }
  REQUIRE(fs->append_files(batch));
  REQUIRE(fs->append_files(batch));
  for (int f = 0; f < 31; ++f) {
    std::string expected;
    for (int i = f; i < 1240; i += 31) expected += fmt::format("{}\n", i);
    CHECK(fs->read(dir / fmt::format("h{}/log", f)).value() == expected + expected);
  }
}

TEST_CASE("a local write that cannot happen is an error and leaves the old file") {
  testing::TempDir dir;
  auto fs = make_local_file_system();
  REQUIRE(fs->write(dir / "x/f", "old"));
  ::chmod((dir / "x").c_str(), 0500);
  auto written = fs->write(dir / "x/f", "new");
  ::chmod((dir / "x").c_str(), 0700);
  if (::geteuid() != 0) {  // root ignores directory permissions
    CHECK_FALSE(written);
  }
  CHECK((fs->read(dir / "x/f").value() == "old" || written));
}

TEST_CASE("the local resolver knows file URIs and refuses hdfs without configuration") {
  auto resolver = make_local_file_system_resolver();
  CHECK(resolver->resolve("file:///").has_value());
  CHECK(resolver->resolve("").has_value());
  auto hdfs = resolver->resolve("hdfs://nn:8020");
  REQUIRE_FALSE(hdfs);
  CHECK_THAT(hdfs.error().message, Catch::Contains("hdfs://nn:8020"));
}

TEST_CASE("file_status of the local file system tells a directory's mtime, and a missing path") {
  testing::TempDir dir;
  auto fs = make_local_file_system();
  REQUIRE(fs->write_files({{dir.path() + "/d/f", "x"}}));
  auto status = fs->file_status(dir.path() + "/d");
  REQUIRE(status);
  CHECK(status->name == "d");
  CHECK(status->is_directory);
  CHECK(status->mtime_ns > 0);
  auto listed = fs->list(dir.path());
  REQUIRE(listed);
  CHECK(listed->at(0).mtime_ns == status->mtime_ns);
  auto missing = fs->file_status(dir.path() + "/nothing");
  REQUIRE(!missing);
  CHECK(missing.error().code == ErrorCode::kNotFound);
}

TEST_CASE("a big batch whose parent directory is a file is an error naming the directory") {
  testing::TempDir dir;
  auto fs = make_local_file_system();
  REQUIRE(fs->write(dir / "wf-7", "a file where a directory should be"));
  std::vector<FileWrite> batch;
  for (int w = 0; w < 300; ++w) batch.push_back({dir / fmt::format("wf-{}/day/slot", w), "m"});
  auto written = fs->write_files(batch);
  REQUIRE_FALSE(written);
  CHECK_THAT(written.error().message, Catch::Contains("cannot create directory"));
  CHECK_THAT(written.error().message, Catch::Contains(dir / "wf-7"));
  CHECK(fs->read(dir / "wf-7").value() == "a file where a directory should be");
}

TEST_CASE("write_files_after runs its step once the contents are written, before any replaces") {
  for (int n : {3, 40}) {  // a small batch (a sync per file) and a big one (syncfs)
    CAPTURE(n);
    testing::TempDir dir;
    auto fs = make_local_file_system();
    std::vector<FileWrite> batch;
    for (int i = 0; i < n; ++i) batch.push_back({dir / ("d/" + std::to_string(i)), "new"});
    REQUIRE(fs->write(dir / "d/0", "old"));
    int temps_seen = -1;
    std::string seen;
    auto after = fs->write_files_after(batch, [&]() -> Result<void> {
      temps_seen = static_cast<int>(temporary_files(dir / "d").size());
      seen = fs->read(dir / "d/0").value();
      return {};
    });
    REQUIRE(after);
    CHECK(temps_seen == n);  // every new content written ...
    CHECK(seen == "old");    // ... and none in place yet
    CHECK(fs->read(dir / ("d/" + std::to_string(n - 1))).value() == "new");

    auto refused =
        fs->write_files_after({{dir / "d/0", "newer"}, {dir / "d/9", "newer"}},
                              []() -> Result<void> { return fail("the spool cannot sync"); });
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message == "the spool cannot sync");
    CHECK(fs->read(dir / "d/0").value() == "new");  // nothing replaced, nothing left behind
    CHECK(temporary_files(dir / "d").empty());
  }
}

TEST_CASE("appends without a sync are read back at once and synced later, a missing file fails") {
  testing::TempDir dir;
  auto fs = make_local_file_system();
  const std::string path = dir / "spool/lines";
  REQUIRE(fs->append_files_unsynced({{path, "a\n"}, {path, "b\n"}}));
  REQUIRE(fs->append_files_unsynced({{path, "c\n"}}));
  CHECK(fs->read(path).value() == "a\nb\nc\n");
  CHECK(fs->sync_files({path}));
  auto missing = fs->sync_files({dir / "spool/none"});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK_THAT(missing.error().message, Catch::Matchers::Contains("spool/none"));
}
