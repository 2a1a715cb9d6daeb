// What the command line's tests share: run `celos` against a scripted fake server.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "celos/cli.h"
#include "testing/fakes.h"

namespace celos::cli_test {

// A clock whose sleeps return at once, moving it forward (log --follow, maintenance --wait).
class SkippingClock final : public Clock {
 public:
  Time now() const override { return Time{} + elapsed_; }
  Monotonic monotonic() const override { return Monotonic{} + elapsed_; }
  bool sleep_until(Monotonic deadline, const std::function<bool()>&) override {
    if (deadline > monotonic()) {
      elapsed_ += std::chrono::ceil<std::chrono::milliseconds>(deadline - monotonic());
    }
    ++sleeps;
    return true;
  }
  void wake_all() override {}
  bool wait_until(CondVar&, Mutex&, Monotonic) override { return false; }
  int sleeps = 0;

 private:
  std::chrono::milliseconds elapsed_{0};
};

struct Cli {
  celos::testing::FakeHttpClient http;
  SkippingClock clock;
  CliEnvironment env{.server = "http://celos:8080"};
  std::ostringstream out, err;

  int run(std::vector<std::string> args) {
    out.str("");
    err.str("");
    return run_cli(args, env, http, clock, out, err);
  }
  // Answers `body` with `status` to requests whose URL contains `url_part`.
  void answer(std::string url_part, std::string body, int status = 200) {
    http.on([=](const HttpRequest& r) -> std::optional<Result<HttpResponse>> {
      if (r.url.find(url_part) == std::string::npos) return std::nullopt;
      return HttpResponse{status, {}, body};
    });
  }
  std::vector<std::string> urls() const {
    std::vector<std::string> list;
    for (const auto& r : http.requests) list.push_back(r.method + " " + r.url);
    return list;
  }
};

}  // namespace celos::cli_test
