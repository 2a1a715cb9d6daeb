// The forwarding base classes forward every virtual method to the object they wrap, each to the
// method of the same name: a method they missed would fall back to the interface's default
// (status_many as a loop of status calls, file_status as a listing), and a decorator built on
// them would silently lose the wrapped object's own answer. One CHECK per method; a virtual
// added to ExternalService or FileSystem gets its line here.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "celos/external_service_wrapper.h"
#include "celos/file_system_wrapper.h"

using namespace celos;

namespace {

const SlotId kSlot{"wf", make_time(2015, 9, 13, 0)};

// Answers each call with a value of its own and records the method's name.
class RecordingService final : public ExternalService {
 public:
  std::vector<std::string> calls;

  Result<std::string> submit(const SlotId&) override { return record("submit", "id-submit"); }
  Result<std::string> submit_with(const SlotId&, const SubmitContext&) override {
    return record("submit_with", "id-submit-with");
  }
  Result<void> start(const SlotId&, const std::string&) override {
    calls.push_back("start");
    return fail("start refused");
  }
  Result<ExternalStatus> status(const SlotId&, const std::string&) override {
    return record("status", ExternalStatus(JobState::kSubmitted, "held"));
  }
  Result<void> kill(const SlotId&, const std::string&) override {
    calls.push_back("kill");
    return fail("kill refused");
  }
  std::string describe() const override { return "recording service"; }
  std::string_view kind() const override { return "recording"; }
  std::string endpoint() const override { return "recording endpoint"; }
  std::string limit_endpoint() const override { return "recording limits"; }
  std::map<std::string, Result<ExternalStatus>> status_many(const std::vector<Job>&) override {
    calls.push_back("status_many");
    return {{"batch", ExternalStatus(JobState::kSuccess)}};
  }
  std::map<std::string, Result<void>> start_many(const std::vector<Job>&) override {
    calls.push_back("start_many");
    return {{"batch", Result<void>()}};
  }
  ServiceTraits traits() const override {
    return {.batches_status = true,
            .batches_start = true,
            .status_batch_limit = 7,
            .writes_done_flags = true,
            .keeps_job_output = true};
  }
  Result<std::string> job_log(const SlotId&, const std::string& external_id,
                              std::string_view stream, std::size_t tail) override {
    return record("job_log", fmt::format("{} {} {}", external_id, stream, tail));
  }

 private:
  template <class T>
  Result<T> record(std::string call, T value) {
    calls.push_back(std::move(call));
    return value;
  }
};

// Likewise for the file system.
class RecordingFileSystem final : public FileSystem {
 public:
  std::vector<std::string> calls;

  Result<bool> exists(const std::string& path) override { return record("exists " + path, true); }
  Result<std::string> read(const std::string& path) override {
    return record("read " + path, std::string("content"));
  }
  Result<void> write_files(const std::vector<FileWrite>& files) override {
    calls.push_back("write_files " + files.at(0).path);
    return {};
  }
  Result<void> make_dirs(const std::string& path) override {
    calls.push_back("make_dirs " + path);
    return {};
  }
  Result<void> remove(const std::string& path) override {
    calls.push_back("remove " + path);
    return {};
  }
  Result<void> rename(const std::string& from, const std::string& to) override {
    calls.push_back("rename " + from + " " + to);
    return {};
  }
  Result<std::vector<FileStatus>> list(const std::string& directory) override {
    return record("list " + directory, std::vector<FileStatus>{{.name = "x"}});
  }
  bool prefers_listing() const override { return true; }  // the default is false
  Result<FileStatus> file_status(const std::string& path) override {
    return record("file_status " + path, FileStatus{.name = "y", .size = 3});
  }
  Result<void> append_files(const std::vector<FileWrite>& files) override {
    calls.push_back("append_files " + files.at(0).path);
    return {};
  }
  Result<void> write_files_after(const std::vector<FileWrite>& files,
                                 const std::function<Result<void>()>& before_visible) override {
    calls.push_back("write_files_after " + files.at(0).path);
    return before_visible();
  }
  Result<void> append_files_unsynced(const std::vector<FileWrite>& files) override {
    calls.push_back("append_files_unsynced " + files.at(0).path);
    return {};
  }
  Result<void> sync_files(const std::vector<std::string>& paths) override {
    calls.push_back("sync_files " + paths.at(0));
    return {};
  }

 private:
  template <class T>
  Result<T> record(std::string call, T value) {
    calls.push_back(std::move(call));
    return value;
  }
};

// The calls recorded since the last look.
std::vector<std::string> take(std::vector<std::string>& calls) { return std::exchange(calls, {}); }

using Calls = std::vector<std::string>;

}  // namespace

TEST_CASE("ExternalServiceWrapper forwards every method to the wrapped service") {
  auto inner = std::make_shared<RecordingService>();
  ExternalServiceWrapper wrapper(inner);
  const std::vector<ExternalService::Job> jobs{{kSlot, "job-1"}};

  CHECK(wrapper.submit(kSlot).value() == "id-submit");
  CHECK(take(inner->calls) == Calls{"submit"});
  CHECK(wrapper.submit_with(kSlot, {}).value() == "id-submit-with");
  CHECK(take(inner->calls) == Calls{"submit_with"});
  CHECK(wrapper.start(kSlot, "job-1").error().message == "start refused");
  CHECK(take(inner->calls) == Calls{"start"});
  CHECK(wrapper.status(kSlot, "job-1").value() == ExternalStatus(JobState::kSubmitted, "held"));
  CHECK(take(inner->calls) == Calls{"status"});
  CHECK(wrapper.kill(kSlot, "job-1").error().message == "kill refused");
  CHECK(take(inner->calls) == Calls{"kill"});
  CHECK(wrapper.status_many(jobs).count("batch") == 1);
  CHECK(take(inner->calls) == Calls{"status_many"});
  CHECK(wrapper.start_many(jobs).count("batch") == 1);
  CHECK(take(inner->calls) == Calls{"start_many"});
  CHECK(wrapper.describe() == "recording service");
  CHECK(wrapper.kind() == "recording");
  CHECK(wrapper.endpoint() == "recording endpoint");
  CHECK(wrapper.limit_endpoint() == "recording limits");
  const ServiceTraits traits = wrapper.traits();
  CHECK(traits.batches_status);
  CHECK(traits.batches_start);
  CHECK(traits.status_batch_limit == 7);
  CHECK(traits.writes_done_flags);
  CHECK(traits.keeps_job_output);
  CHECK(wrapper.job_log(kSlot, "job-1", "stderr", 10).value() == "job-1 stderr 10");
  CHECK(take(inner->calls) == Calls{"job_log"});
  CHECK(&wrapper.target() == inner.get());
}

TEST_CASE("FileSystemWrapper forwards every method to the wrapped file system") {
  auto inner = std::make_shared<RecordingFileSystem>();
  FileSystemWrapper wrapper(inner);

  CHECK(wrapper.exists("/a").value());
  CHECK(take(inner->calls) == Calls{"exists /a"});
  CHECK(wrapper.read("/a").value() == "content");
  CHECK(take(inner->calls) == Calls{"read /a"});
  CHECK(wrapper.write_files({{"/w", "data"}}).has_value());
  CHECK(take(inner->calls) == Calls{"write_files /w"});
  CHECK(wrapper.make_dirs("/d").has_value());
  CHECK(take(inner->calls) == Calls{"make_dirs /d"});
  CHECK(wrapper.remove("/r").has_value());
  CHECK(take(inner->calls) == Calls{"remove /r"});
  CHECK(wrapper.rename("/from", "/to").has_value());
  CHECK(take(inner->calls) == Calls{"rename /from /to"});
  CHECK(wrapper.list("/l").value().at(0).name == "x");
  CHECK(take(inner->calls) == Calls{"list /l"});
  CHECK(wrapper.prefers_listing());
  CHECK(wrapper.file_status("/s/y").value().size == 3);
  CHECK(take(inner->calls) == Calls{"file_status /s/y"});
  CHECK(wrapper.append_files({{"/p", "line\n"}}).has_value());
  CHECK(take(inner->calls) == Calls{"append_files /p"});
  bool ran = false;
  CHECK(wrapper
            .write_files_after({{"/a", "data"}},
                               [&]() -> Result<void> {
                                 ran = true;
                                 return {};
                               })
            .has_value());
  CHECK(ran);
  CHECK(take(inner->calls) == Calls{"write_files_after /a"});
  CHECK(wrapper.append_files_unsynced({{"/u", "line\n"}}).has_value());
  CHECK(take(inner->calls) == Calls{"append_files_unsynced /u"});
  CHECK(wrapper.sync_files({"/u"}).has_value());
  CHECK(take(inner->calls) == Calls{"sync_files /u"});
  CHECK(&wrapper.target() == inner.get());
}
