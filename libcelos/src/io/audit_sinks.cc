// Decorating audit sinks (celos/audit.h): the rate limit of refusals, and file + table.
//
// Why a rate limit: a refused request costs the client a few hundred bytes and the server a
// line of up to 4 KB; one connection could fill the disk. Accepted mutations are always written
// (they changed something); refusals beyond a client's budget are counted, and the count is
// written once the client is back under its budget, so the trail still says what happened.
#include <algorithm>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "celos/audit.h"
#include "celos/mutex.h"

namespace celos {
namespace {

using Instant = Clock::Monotonic;

struct Bucket {
  double tokens = 0;
  Instant at{};
  // Refill at `rate` up to `burst`; true (and one token spent) when a token is left.
  bool take(double burst, double rate, Instant now) {
    refill(burst, rate, now);
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  }
  void refill(double burst, double rate, Instant now) {
    const double seconds = std::chrono::duration<double>(now - at).count();
    tokens = std::min(burst, tokens + std::max(0.0, seconds) * rate);
    at = now;
  }
};

struct ClientState {
  Bucket bucket;
  std::uint64_t suppressed = 0;
  AuditRecord last;  // the last suppressed refusal (method, path, status of the summary)
};

class RateLimitedAuditSink final : public AuditSink {
 public:
  RateLimitedAuditSink(std::unique_ptr<AuditSink> inner, AuditRateLimit limit)
      : inner_(std::move(inner)), limit_(std::move(limit)) {
    if (!limit_.clock) limit_.clock = [] { return system_clock().monotonic(); };
    total_ = Bucket{limit_.total_burst, limit_.clock()};
  }

  void append(const AuditRecord& record) override EXCLUDES(mutex_) {
    std::vector<AuditRecord> out;
    {
      MutexLock lock(mutex_);
      const Instant now = limit_.clock();
      sweep(now, out);
      if (!record.refused) {
        flush(record.client, record.time, out);
        out.push_back(record);
      } else if (admit(record.client, now)) {
        flush(record.client, record.time, out);
        out.push_back(record);
      } else {
        suppress(record, now);
      }
    }
    for (const AuditRecord& r : out) inner_->append(r);
  }

  Result<std::vector<AuditRecord>> latest(std::optional<Time> since, std::size_t limit) override {
    return inner_->latest(since, limit);
  }

 private:
  bool admit(const std::string& client, Instant now) REQUIRES(mutex_) {
    auto it = clients_.find(client);
    if (it != clients_.end() &&
        !it->second.bucket.take(limit_.client_burst, limit_.client_per_second, now)) {
      return false;
    }
    if (!total_.take(limit_.total_burst, limit_.total_per_second, now)) return false;
    if (it == clients_.end() && clients_.size() < limit_.max_clients) {
      // A new client starts with a full bucket, less this record.
      clients_.emplace(client, ClientState{Bucket{limit_.client_burst - 1, now}, 0, {}});
    }
    return true;
  }

  void suppress(const AuditRecord& record, Instant now) REQUIRES(mutex_) {
    auto it = clients_.find(record.client);
    if (it == clients_.end() && clients_.size() < limit_.max_clients) {
      it = clients_.emplace(record.client, ClientState{Bucket{0, now}, 0, {}}).first;
    }
    if (it != clients_.end()) {
      ++it->second.suppressed;
      it->second.last = record;
    } else {
      ++untracked_;
    }
    if (limit_.on_suppressed) limit_.on_suppressed(1);
  }

  // The summary of `client`'s suppressed refusals, if any, into `out`.
  void flush(const std::string& client, Time time, std::vector<AuditRecord>& out) REQUIRES(mutex_) {
    auto it = clients_.find(client);
    if (it == clients_.end() || it->second.suppressed == 0) return;
    out.push_back(summary(it->second, time));
    it->second.suppressed = 0;
  }

  static AuditRecord summary(const ClientState& state, Time time) {
    AuditRecord r = state.last;
    r.time = time;
    r.suppressed = state.suppressed;
    r.query.clear();
    r.truncated.erase("query");
    return r;
  }

  // At most once a second: clients whose bucket is full again get their summary written, and
  // quiet clients are forgotten (the map stays bounded).
  void sweep(Instant now, std::vector<AuditRecord>& out) REQUIRES(mutex_) {
    if (now - last_sweep_ < std::chrono::seconds(1)) return;
    last_sweep_ = now;
    for (auto it = clients_.begin(); it != clients_.end();) {
      ClientState& state = it->second;
      state.bucket.refill(limit_.client_burst, limit_.client_per_second, now);
      if (state.bucket.tokens < limit_.client_burst) {
        ++it;
        continue;
      }
      if (state.suppressed > 0) out.push_back(summary(state, state.last.time));
      it = clients_.erase(it);
    }
    if (untracked_ > 0) {
      spdlog::warn("audit: {} refusals of untracked clients (more than {} clients) not written",
                   untracked_, limit_.max_clients);
      untracked_ = 0;
    }
  }

  std::unique_ptr<AuditSink> inner_;
  AuditRateLimit limit_;
  Mutex mutex_;
  Bucket total_ GUARDED_BY(mutex_);
  std::unordered_map<std::string, ClientState> clients_ GUARDED_BY(mutex_);
  std::uint64_t untracked_ GUARDED_BY(mutex_) = 0;
  Instant last_sweep_ GUARDED_BY(mutex_){};
};

class TeeAuditSink final : public AuditSink {
 public:
  TeeAuditSink(std::unique_ptr<AuditSink> fallback, std::unique_ptr<AuditSink> reader)
      : fallback_(std::move(fallback)), reader_(std::move(reader)) {}

  void append(const AuditRecord& record) override {
    fallback_->append(record);
    reader_->append(record);
  }

  Result<std::vector<AuditRecord>> latest(std::optional<Time> since, std::size_t limit) override {
    auto records = reader_->latest(since, limit);
    if (records) return records;
    spdlog::warn("audit: reading this node's file instead of the table: {}",
                 records.error().message);
    return fallback_->latest(since, limit);
  }

 private:
  std::unique_ptr<AuditSink> fallback_, reader_;
};

}  // namespace

std::unique_ptr<AuditSink> make_rate_limited_audit_sink(std::unique_ptr<AuditSink> inner,
                                                        AuditRateLimit limit) {
  return std::make_unique<RateLimitedAuditSink>(std::move(inner), std::move(limit));
}

std::unique_ptr<AuditSink> make_tee_audit_sink(std::unique_ptr<AuditSink> fallback,
                                               std::unique_ptr<AuditSink> reader) {
  return std::make_unique<TeeAuditSink>(std::move(fallback), std::move(reader));
}

}  // namespace celos
