// The audit trail's sinks (celos/audit.h): bounded records, the file read backwards, daily
// files with retention, the rate limit of refusals, and the PostgreSQL table.
#include "celos/audit.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "io/backward_lines.h"
#include "testing/postgres_server.h"
#include "testing/temp_dir.h"

using namespace celos;

namespace {

std::string fmt_time(int day, int hour, int minute, int second) {
  char text[64];
  std::snprintf(text, sizeof text, "2026-11-%02dT%02d:%02d:%02d.000Z", day, hour, minute, second);
  return text;
}

Time at(int day, int hour, int minute = 0, int second = 0) {
  return *parse_time(fmt_time(day, hour, minute, second));
}

AuditRecord record(Time time, std::string client = "10.0.0.1", int status = 200) {
  AuditRecord r;
  r.time = time;
  r.node = "here:1";
  r.client = std::move(client);
  r.method = "POST";
  r.path = "/api/v1/pause";
  r.query = "id=wf";
  r.status = status;
  return r;
}

class MemorySink final : public AuditSink {
 public:
  void append(const AuditRecord& r) override { records.push_back(r); }
  Result<std::vector<AuditRecord>> latest(std::optional<Time>, std::size_t) override {
    if (broken) return fail("table down");
    return std::vector<AuditRecord>(records.rbegin(), records.rend());
  }
  std::vector<AuditRecord> records;
  bool broken = false;
};

}  // namespace

TEST_CASE("Long audit fields are cut on a character boundary and marked as truncated") {
  AuditRecord r = record(at(1, 0));
  r.query = std::string(AuditFieldLimits::kQuery - 1, 'q') + "\xC3\xA9" + std::string(15000, 'x');
  const std::size_t original = r.query.size();
  r.path = "/api/v1/pause";
  bound_audit_record(r);
  CHECK(r.query.size() == AuditFieldLimits::kQuery - 1);  // the 2-byte é does not fit: cut before
  CHECK(r.truncated.at("query") == original);
  CHECK_FALSE(r.truncated.count("path"));
  const std::string line = audit_record_to_json(r);
  CHECK(line.size() < 4096);
  auto back = audit_record_from_json(line);
  REQUIRE(back);
  CHECK(back->truncated.at("query") == original);
  CHECK(back->query == r.query);
  CHECK(audit_record_to_json(record(at(1, 0))).find("truncated") == std::string::npos);
}

TEST_CASE("Lines are read from the end of a file, skipping over-long ones") {
  testing::TempDir dir;
  const std::string path = dir / "f";
  std::ofstream(path) << "first\n" << std::string(5000, 'L') << "\n\nthird\nlast-without-newline";
  std::vector<std::string> lines;
  auto ok = for_each_line_backwards(
      path,
      [&](std::string_view l) {
        lines.emplace_back(l);
        return true;
      },
      /*max_line=*/1000, /*block=*/7);
  REQUIRE(ok);
  CHECK(lines == std::vector<std::string>{"last-without-newline", "third", "first"});
  lines.clear();
  REQUIRE(for_each_line_backwards(path, [&](std::string_view l) {
    lines.emplace_back(l);
    return false;
  }));
  CHECK(lines.size() == 1);
  CHECK(for_each_line_backwards(dir / "missing", [](std::string_view) { return true; }));
}

TEST_CASE("A file that cannot be read is an error naming it and the reason") {
  testing::TempDir dir;
  auto read = for_each_line_backwards(dir.path(), [](std::string_view) { return true; });
  REQUIRE_FALSE(read);
  CHECK(read.error().message.find(dir.path()) != std::string::npos);
  CHECK(read.error().message.find("Is a directory") != std::string::npos);
}

TEST_CASE("The file sink answers the newest records from the end, across rolled days") {
  testing::TempDir dir;
  auto sink = make_file_audit_sink(dir.path(), 90);
  for (int day = 1; day <= 3; ++day) {
    for (int i = 0; i < 500; ++i) sink->append(record(at(day, 1, i / 60, i % 60)));
  }
  CHECK(std::filesystem::exists(dir / "audit.log.2026-11-01"));
  CHECK(std::filesystem::exists(dir / "audit.log.2026-11-02"));
  auto one = sink->latest(std::nullopt, 1);
  REQUIRE(one);
  REQUIRE(one->size() == 1);
  CHECK((*one)[0].time == at(3, 1, 8, 19));
  auto many = sink->latest(std::nullopt, 700);  // all of day 3, the end of day 2
  REQUIRE(many);
  REQUIRE(many->size() == 700);
  CHECK(many->back().time == at(2, 1, 5, 0));  // record 300 of day 2
  auto since = sink->latest(at(3, 1, 8, 0), 1000);
  REQUIRE(since);
  CHECK(since->size() == 20);
}

TEST_CASE("The file sink keeps keep_days rolled files, also those found at start") {
  testing::TempDir dir;
  for (int day = 1; day <= 5; ++day) {
    std::ofstream(dir / ("audit.log.2026-10-0" + std::to_string(day))) << "\n";
  }
  auto sink = make_file_audit_sink(dir.path(), 2);
  CHECK_FALSE(std::filesystem::exists(dir / "audit.log.2026-10-03"));
  CHECK(std::filesystem::exists(dir / "audit.log.2026-10-04"));
  CHECK(std::filesystem::exists(dir / "audit.log.2026-10-05"));
}

TEST_CASE("A file sink that cannot write or read says why, and the server goes on") {
  testing::TempDir dir;
  testing::write_text_file(dir / "plain", "a file where the logs directory should be\n");
  auto sink = make_file_audit_sink(dir / "plain", 2);
  sink->append(record(at(1, 0)));  // logged: "cannot open .../audit.log to append: Not a directory"
  auto read = sink->latest(std::nullopt, 10);
  REQUIRE_FALSE(read);
  CHECK(read.error().message.find(dir / "plain/audit.log") != std::string::npos);
  CHECK(read.error().message.find("Not a directory") != std::string::npos);
}

TEST_CASE("Refusals over a client's budget are counted, not written, then summarized") {
  auto memory = std::make_unique<MemorySink>();
  MemorySink& inner = *memory;
  auto now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  std::uint64_t suppressed = 0;
  auto sink = make_rate_limited_audit_sink(
      std::move(memory), {.client_burst = 3,
                          .client_per_second = 1,
                          .total_burst = 100,
                          .total_per_second = 100,
                          .clock = [&now] { return now; },
                          .on_suppressed = [&](std::uint64_t n) { suppressed += n; }});
  AuditRecord refused = record(at(1, 0), "10.0.0.9", 401);
  refused.refused = true;
  for (int i = 0; i < 50; ++i) sink->append(refused);
  CHECK(inner.records.size() == 3);
  CHECK(suppressed == 47);
  sink->append(record(at(1, 0), "10.0.0.8", 200));  // another client, accepted: written
  sink->append(record(at(1, 0), "10.0.0.7", 401));  // not a refusal of check(): written
  CHECK(inner.records.size() == 5);
  now += std::chrono::seconds(2);
  sink->append(refused);  // back under the limit: the summary, then the record
  REQUIRE(inner.records.size() == 7);
  CHECK(inner.records[5].suppressed == 47);
  CHECK(inner.records[5].client == "10.0.0.9");
  CHECK(inner.records[5].status == 401);
  CHECK(inner.records[6].suppressed == 0);
}

TEST_CASE("A client that went quiet gets its summary once its bucket is full again") {
  auto memory = std::make_unique<MemorySink>();
  MemorySink& inner = *memory;
  auto now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  auto sink = make_rate_limited_audit_sink(
      std::move(memory),
      {.client_burst = 2, .client_per_second = 1, .clock = [&now] { return now; }});
  AuditRecord refused = record(at(1, 0), "10.0.0.9", 403);
  refused.refused = true;
  for (int i = 0; i < 10; ++i) sink->append(refused);
  CHECK(inner.records.size() == 2);
  now += std::chrono::seconds(10);
  sink->append(record(at(1, 0), "10.0.0.1", 200));
  REQUIRE(inner.records.size() == 4);
  CHECK(inner.records[2].suppressed == 8);
}

TEST_CASE("The total budget bounds refusals of many clients") {
  auto memory = std::make_unique<MemorySink>();
  MemorySink& inner = *memory;
  auto now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  auto sink = make_rate_limited_audit_sink(
      std::move(memory),
      {.total_burst = 10, .total_per_second = 1, .clock = [&now] { return now; }});
  for (int i = 0; i < 100; ++i) {
    AuditRecord refused = record(at(1, 0), "10.0.1." + std::to_string(i), 401);
    refused.refused = true;
    sink->append(refused);
  }
  CHECK(inner.records.size() == 10);
}

TEST_CASE("The tee reads the table and falls back to the file") {
  auto file = std::make_unique<MemorySink>();
  auto table = std::make_unique<MemorySink>();
  MemorySink& t = *table;
  auto tee = make_tee_audit_sink(std::move(file), std::move(table));
  tee->append(record(at(1, 0)));
  CHECK(t.records.size() == 1);
  t.records.clear();
  auto read = tee->latest(std::nullopt, 10);
  REQUIRE(read);
  CHECK(read->empty());  // the table answered
  t.broken = true;
  read = tee->latest(std::nullopt, 10);
  REQUIRE(read);
  CHECK(read->size() == 1);  // the file's
}

TEST_CASE("The PostgreSQL audit table is written by every node and read newest first") {
  static std::string why_not;
  static auto server = testing::PostgresServer::start(why_not);
  if (!server) {
    WARN("SKIPPED: " << why_not);
    return;
  }
  const std::string uri = server->create_database("audit1");
  {
    auto a = make_postgres_audit_sink(uri, 36500);
    auto b = make_postgres_audit_sink(uri, 36500);
    AuditRecord long_one = record(at(2, 0), "10.0.0.2");
    long_one.query = std::string(20000, 'x');
    bound_audit_record(long_one);
    a->append(record(at(1, 0), "10.0.0.1"));
    b->append(long_one);
    a->append(record(at(3, 0), "10.0.0.3"));
  }  // the sinks write what they queued before they stop
  auto reader = make_postgres_audit_sink(uri, 36500);
  auto all = reader->latest(std::nullopt, 10);
  REQUIRE(all);
  REQUIRE(all->size() == 3);
  CHECK((*all)[0].client == "10.0.0.3");
  CHECK((*all)[1].truncated.at("query") == 20000);
  CHECK((*all)[1].query.size() == AuditFieldLimits::kQuery);
  CHECK((*all)[2].time == at(1, 0));
  auto since = reader->latest(at(2, 0), 10);
  REQUIRE(since);
  CHECK(since->size() == 2);
  auto one = reader->latest(std::nullopt, 1);
  REQUIRE(one);
  CHECK(one->size() == 1);
}
