// Sending the spool's OpenLineage events (celos/lineage.h): the HTTP and file transports and the
// sender's loop. Events go oldest first and one at a time, so a run's events arrive in order.
#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "celos/lineage.h"

namespace celos {
namespace {

// How many events the sender takes from the spool at once.
constexpr std::size_t kSendBatch = 64;
// How often a node that may not send (a standby) asks again.
constexpr std::chrono::milliseconds kNotLeaderPoll{1000};

// Writes the "d" lines of sent events once per drain, not per batch: each flush syncs the spool
// under its lock, which the step's writes wait for (a flush per 64 events made a steady step of
// 1,000 workflows a quarter slower).
void flush_removals(LineageSpool& spool) {
  if (auto flushed = spool.flush(); !flushed) {
    spdlog::error("OpenLineage: {}", flushed.error().message);
  }
}

class HttpLineageTransport final : public LineageTransport {
 public:
  HttpLineageTransport(std::shared_ptr<HttpClient> http, std::string url, std::string token)
      : http_(std::move(http)), url_(std::move(url)), token_(std::move(token)) {}

  Result<void> send(const LineageEvent& event) override {
    HttpRequest request;
    request.method = "POST";
    request.url = url_;
    request.headers.emplace_back("Content-Type", "application/json");
    if (!token_.empty()) request.headers.emplace_back("Authorization", "Bearer " + token_);
    request.body = event.json;
    auto response = http_->send(request);
    if (!response) return tl::unexpected(response.error());
    if (response->status >= 200 && response->status < 300) return {};
    std::string body = response->body.substr(0, 500);
    if (response->status >= 400 && response->status < 500) {
      return fail(fmt::format("HTTP {}: {}", response->status, body), ErrorCode::kInvalid);
    }
    return fail(fmt::format("HTTP {}: {}", response->status, body), ErrorCode::kUnavailable);
  }

  std::string describe() const override { return url_; }

 private:
  std::shared_ptr<HttpClient> http_;
  std::string url_;
  std::string token_;
};

class FileLineageTransport final : public LineageTransport {
 public:
  FileLineageTransport(std::shared_ptr<FileSystem> fs, std::string path)
      : fs_(std::move(fs)), path_(std::move(path)) {}

  Result<void> send(const LineageEvent& event) override {
    return fs_->append_files({{path_, event.json + "\n"}});
  }

  std::string describe() const override { return path_; }

 private:
  std::shared_ptr<FileSystem> fs_;
  std::string path_;
};

}  // namespace

std::unique_ptr<LineageTransport> make_http_lineage_transport(std::shared_ptr<HttpClient> http,
                                                              std::string url, std::string token) {
  return std::make_unique<HttpLineageTransport>(std::move(http), std::move(url), std::move(token));
}

std::unique_ptr<LineageTransport> make_file_lineage_transport(std::shared_ptr<FileSystem> fs,
                                                              std::string path) {
  return std::make_unique<FileLineageTransport>(std::move(fs), std::move(path));
}

Result<void> check_lineage_url(std::string_view url) {
  std::string_view rest;
  if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else if (url.rfind("https://", 0) == 0) {
    rest = url.substr(8);
  } else {
    return fail(fmt::format("\"{}\" is not an http:// or https:// URL", url), ErrorCode::kInvalid);
  }
  const std::string_view host = rest.substr(0, rest.find_first_of("/?#"));
  if (host.empty() || host.front() == ':') {
    return fail(fmt::format("\"{}\" has no host", url), ErrorCode::kInvalid);
  }
  if (url.find_first_of(" \t\r\n") != std::string_view::npos) {
    return fail(fmt::format("\"{}\" contains white space", url), ErrorCode::kInvalid);
  }
  return {};
}

LineageSender::LineageSender(LineageSpool& spool, std::unique_ptr<LineageTransport> transport,
                             LineageSenderOptions options, bool start_thread)
    : spool_(spool),
      transport_(std::move(transport)),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : system_clock()) {
  if (start_thread) thread_ = std::thread([this] { loop(); });
}

LineageSender::~LineageSender() { stop(); }

void LineageSender::wake() {
  MutexLock lock(mutex_);
  woken_ = true;
  wake_.notify_one();
}

void LineageSender::stop() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
    wake_.notify_one();
  }
  clock_.wake_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<std::chrono::milliseconds> LineageSender::send_due() {
  if (options_.may_send && !options_.may_send()) return kNotLeaderPoll;
  for (;;) {
    const std::vector<SpoolEntry> batch = spool_.pending(kSendBatch);
    if (batch.empty()) break;
    std::vector<std::uint64_t> done;
    bool going = true;
    for (const SpoolEntry& entry : batch) {
      if (!(going = send_one(entry, done))) break;
    }
    spool_.remove(done);
    if (!going) {
      flush_removals(spool_);
      return backoff_;
    }
  }
  flush_removals(spool_);
  return std::nullopt;
}

bool LineageSender::send_one(const SpoolEntry& entry, std::vector<std::uint64_t>& done) {
  auto sent = transport_->send(entry.event);
  if (sent) {
    if (backoff_.count() > 0)
      spdlog::info("OpenLineage: {} accepts events again", transport_->describe());
    backoff_ = std::chrono::milliseconds(0);
    rejections_.erase(entry.seq);
    done.push_back(entry.seq);
    if (options_.on_sent) options_.on_sent();
    return true;
  }
  if (sent.error().code == ErrorCode::kInvalid) {
    const int tries = ++rejections_[entry.seq];
    if (tries >= options_.max_rejections) {
      spdlog::error(
          "OpenLineage: {} rejected {} of run {} (slot {}) {} times, dropped: {}; event: {}",
          transport_->describe(), entry.event.type, entry.event.run_id, to_string(entry.event.slot),
          tries, sent.error().message, entry.event.json);
      rejections_.erase(entry.seq);
      done.push_back(entry.seq);
      if (options_.on_rejected) options_.on_rejected();
      return true;
    }
  }
  if (backoff_.count() == 0) {
    spdlog::warn("OpenLineage: sending to {} failed ({}); retrying with back-off",
                 transport_->describe(), sent.error().message);
    backoff_ = options_.first_retry;
  } else {
    backoff_ = std::min(backoff_ * 2, options_.max_retry);
  }
  return false;
}

// Waits for new events (wake) or, while backing off, for the retry time alone: new events do
// not cut a back-off short.
void LineageSender::loop() {
  std::optional<Clock::Monotonic> until;
  for (;;) {
    {
      MutexLock lock(mutex_);
      while (!stopping_) {
        if (until) {
          if (clock_.monotonic() >= *until) break;
          clock_.wait_until(wake_, mutex_, *until);
          continue;
        }
        if (woken_) break;
        wake_.wait(mutex_);
      }
      if (stopping_) return;
      woken_ = false;
    }
    const auto next = send_due();
    until = next ? std::optional(clock_.monotonic() + *next) : std::nullopt;
  }
}

}  // namespace celos
