#include "celos/job_output.h"

#include <catch2/catch.hpp>
#include <unistd.h>

#include "testing/temp_dir.h"

using namespace celos;

namespace {
const SlotId kSlot{"wf", make_time(2015, 9, 15, 1)};
}

TEST_CASE("the tail of a job's output is read from the end of the file") {
  testing::TempDir dir;
  const std::string job = dir / "jobs/wf/2015-09-15/01:00:00.000Z/job-1";
  testing::write_text_file(job + "/stdout", std::string(100000, 'a') + "the end\n");
  testing::write_text_file(job + "/stderr", "oops\n");
  CHECK(read_job_output(dir / "jobs", kSlot, "job-1", "stdout", 8).value() == "the end\n");
  CHECK(read_job_output(dir / "jobs", kSlot, "job-1", "stdout", kDefaultLogTail)->size() ==
        kDefaultLogTail);
  CHECK(read_job_output(dir / "jobs", kSlot, "job-1", "stderr", 100).value() == "oops\n");
}

TEST_CASE("a tail that starts inside a UTF-8 character starts after it") {
  testing::TempDir dir;
  testing::write_text_file(dir / "jobs/wf/2015-09-15/01:00:00.000Z/j/stdout", "x\xc3\xa9y");
  CHECK(read_job_output(dir / "jobs", kSlot, "j", "stdout", 2).value() == "y");
}

TEST_CASE("job output is never read outside the jobs directory") {
  testing::TempDir dir;
  testing::write_text_file(dir / "secret", "secret\n");
  testing::write_text_file(dir / "jobs/wf/2015-09-15/01:00:00.000Z/j/x", "");
  CHECK(read_job_output(dir / "jobs", kSlot, "..", "stdout", 10).error().code ==
        ErrorCode::kInvalid);
  CHECK(read_job_output(dir / "jobs", kSlot, "a/../../b", "stdout", 10).error().code ==
        ErrorCode::kInvalid);
  CHECK(read_job_output(dir / "jobs", kSlot, "j", "../x", 10).error().code == ErrorCode::kInvalid);
  REQUIRE(::symlink((dir / "secret").c_str(),
                    (dir / "jobs/wf/2015-09-15/01:00:00.000Z/j/stdout").c_str()) == 0);
  CHECK(read_job_output(dir / "jobs", kSlot, "j", "stdout", 10).error().code ==
        ErrorCode::kInvalid);
  CHECK(read_job_output(dir / "jobs", kSlot, "nope", "stdout", 10).error().code ==
        ErrorCode::kNotFound);
}
