#include "testing/file_system_contract.h"

#include <catch2/catch.hpp>

namespace celos::testing {
namespace {

bool exists(FileSystem& fs, const std::string& path) {
  auto r = fs.exists(path);
  INFO("exists " << path << ": " << (r ? "" : r.error().message));
  REQUIRE(r);
  return *r;
}

std::string read(FileSystem& fs, const std::string& path) {
  auto r = fs.read(path);
  INFO("read " << path << ": " << (r ? "" : r.error().message));
  REQUIRE(r);
  return *r;
}

// Writing creates parents and replaces; empty files, UTF-8 and spaces survive; reading what is
// not there is kNotFound, not an error of the file system.
void writes_and_reads(FileSystem& fs, const std::string& base) {
  CHECK_FALSE(exists(fs, base + "/a"));
  REQUIRE(fs.write_files(
      {{base + "/a/b/c.txt", "hello"}, {base + "/a/d e.txt", "a & é\n"}, {base + "/a/empty", ""}}));
  CHECK(exists(fs, base + "/a"));
  CHECK(exists(fs, base + "/a/b/c.txt"));
  CHECK(read(fs, base + "/a/b/c.txt") == "hello");
  CHECK(read(fs, base + "/a/d e.txt") == "a & é\n");
  CHECK(read(fs, base + "/a/empty").empty());
  REQUIRE(fs.write(base + "/a/b/c.txt", "replaced"));
  CHECK(read(fs, base + "/a/b/c.txt") == "replaced");
  auto missing = fs.read(base + "/nope");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kNotFound);
}

// Listings are sorted by name, say which entries are directories and how big files are.
void lists_and_stats(FileSystem& fs, const std::string& base, const FileSystemCapabilities& can) {
  auto entries = fs.list(base + "/a");
  REQUIRE(entries);
  REQUIRE(entries->size() == 3);
  CHECK(entries->at(0).name == "b");
  CHECK(entries->at(0).is_directory);
  CHECK(entries->at(1).name == "d e.txt");
  CHECK_FALSE(entries->at(1).is_directory);
  CHECK(entries->at(1).size == 7);  // UTF-8: é is two bytes
  CHECK(entries->at(2).name == "empty");
  CHECK(entries->at(2).size == 0);
  auto none = fs.list(base + "/none");
  REQUIRE_FALSE(none);
  CHECK(none.error().code == ErrorCode::kNotFound);
  // list_names: the same names in the same order, the same directories.
  auto names = fs.list_names(base + "/a");
  REQUIRE(names);
  REQUIRE(names->size() == entries->size());
  for (std::size_t i = 0; i < names->size(); ++i) {
    CHECK(names->at(i).name == entries->at(i).name);
    CHECK(names->at(i).is_directory == entries->at(i).is_directory);
  }
  auto no_names = fs.list_names(base + "/none");
  REQUIRE_FALSE(no_names);
  CHECK(no_names.error().code == ErrorCode::kNotFound);

  auto file = fs.file_status(base + "/a/b/c.txt");
  REQUIRE(file);
  CHECK(file->name == "c.txt");
  CHECK_FALSE(file->is_directory);
  CHECK(file->size == 8);
  CHECK((file->mtime_ns > 0) == can.mtimes);
  auto dir = fs.file_status(base + "/a/b");
  REQUIRE(dir);
  CHECK(dir->is_directory);
  auto gone = fs.file_status(base + "/a/nothing");
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == ErrorCode::kNotFound);
}

// A directory's listing and exists() agree, which is what a step's checks by listing rely on
// (issue 28): each listed name exists, a name not listed does not, and nothing exists under a
// directory whose listing is kNotFound.
void listings_answer_exists(FileSystem& fs, const std::string& base,
                            const FileSystemCapabilities& can) {
  CHECK(fs.prefers_listing() == can.prefers_listing);
  auto entries = fs.list(base + "/a");
  REQUIRE(entries);
  for (const FileStatus& e : *entries) CHECK(exists(fs, base + "/a/" + e.name));
  CHECK_FALSE(exists(fs, base + "/a/c.txt"));  // only in a/b, so not listed in a
  CHECK_FALSE(fs.list(base + "/none").has_value());
  CHECK_FALSE(exists(fs, base + "/none/x"));
}

// make_dirs is mkdir -p (again is fine); an empty directory lists empty.
void makes_directories(FileSystem& fs, const std::string& base) {
  REQUIRE(fs.make_dirs(base + "/e/f"));
  REQUIRE(fs.make_dirs(base + "/e/f"));
  CHECK(exists(fs, base + "/e/f"));
  auto empty = fs.list(base + "/e/f");
  REQUIRE(empty);
  CHECK(empty->empty());
}

// Renames move files and whole directories; onto an existing file as the capability says.
void renames(FileSystem& fs, const std::string& base, const FileSystemCapabilities& can) {
  REQUIRE(fs.rename(base + "/a/b", base + "/e/g"));
  CHECK(read(fs, base + "/e/g/c.txt") == "replaced");
  CHECK_FALSE(exists(fs, base + "/a/b"));
  REQUIRE(fs.rename(base + "/a/empty", base + "/e/moved"));
  CHECK(exists(fs, base + "/e/moved"));
  CHECK_FALSE(exists(fs, base + "/a/empty"));

  auto onto = fs.rename(base + "/e/moved", base + "/a/d e.txt");
  if (can.rename_replaces_file) {
    REQUIRE(onto);
    CHECK(read(fs, base + "/a/d e.txt").empty());
    CHECK_FALSE(exists(fs, base + "/e/moved"));
  } else {
    CHECK_FALSE(onto);
    CHECK(read(fs, base + "/a/d e.txt") == "a & é\n");
    CHECK(exists(fs, base + "/e/moved"));
  }
}

// Appends create missing files (and parents) and keep each file's appends in order, also when
// a batch names a file twice.
void appends(FileSystem& fs, const std::string& base) {
  REQUIRE(fs.append_files({{base + "/log/x", "1\n"}, {base + "/log/y", "a\n"}}));
  REQUIRE(fs.append_files({{base + "/log/x", "2\n"}, {base + "/log/x", "3\n"}}));
  CHECK(read(fs, base + "/log/x") == "1\n2\n3\n");
  CHECK(read(fs, base + "/log/y") == "a\n");
}

// Removing takes files and whole trees; nothing there is fine.
void removes(FileSystem& fs, const std::string& base) {
  REQUIRE(fs.remove(base + "/log/y"));
  CHECK_FALSE(exists(fs, base + "/log/y"));
  CHECK(exists(fs, base + "/log/x"));
  REQUIRE(fs.remove(base + "/e"));
  CHECK_FALSE(exists(fs, base + "/e/g/c.txt"));
  CHECK_FALSE(exists(fs, base + "/e"));
  CHECK(fs.remove(base + "/e"));
  CHECK(fs.remove(base + "/never-there"));
}

}  // namespace

void check_file_system_contract(FileSystem& fs, const std::string& base,
                                const FileSystemCapabilities& can) {
  INFO("base " << base);
  writes_and_reads(fs, base);
  lists_and_stats(fs, base, can);
  listings_answer_exists(fs, base, can);
  makes_directories(fs, base);
  renames(fs, base, can);
  appends(fs, base);
  removes(fs, base);
}

}  // namespace celos::testing
