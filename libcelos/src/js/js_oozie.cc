// celos.oozieExternalService builds its service here. Loading a workflow file must never fail
// because Oozie cannot be reached or is not configured: such problems are reported when a slot
// is submitted, as an error of that workflow's step.
#include <fmt/format.h>

#include "js/js_scope.h"

namespace celos::js {
namespace {

// Answers every call with the same error (no URL, no HTTP client).
class UnusableOozieService : public ExternalService {
 public:
  UnusableOozieService(std::string url, std::string problem)
      : url_(std::move(url)), problem_(std::move(problem)) {}
  Result<std::string> submit(const SlotId& slot) override {
    return fail(fmt::format("cannot submit {} to Oozie: {}", to_string(slot), problem_));
  }
  Result<void> start(const SlotId&, const std::string&) override { return fail(problem_); }
  Result<ExternalStatus> status(const SlotId&, const std::string&) override {
    return fail(problem_);
  }
  Result<void> kill(const SlotId&, const std::string&) override { return fail(problem_); }
  std::string describe() const override { return "oozie " + url_; }
  std::string_view kind() const override { return "oozie"; }
  std::string limit_endpoint() const override { return "oozie " + url_; }

 private:
  std::string url_;
  std::string problem_;
};

}  // namespace

ExternalServicePtr make_js_oozie_service(std::shared_ptr<HttpClient> http, std::string url,
                                         std::map<std::string, std::string> defaults,
                                         OoziePropertiesFunction properties, std::string user) {
  if (url.empty()) {
    return std::make_shared<UnusableOozieService>(
        url, "no Oozie URL: pass one to celos.oozieExternalService or define CELOS_DEFAULT_OOZIE");
  }
  if (!http) {
    return std::make_shared<UnusableOozieService>(
        url, "the Oozie external service is not available (no HTTP client configured)");
  }
  return make_oozie_external_service(std::move(http), std::move(url), std::move(defaults),
                                     std::move(properties), std::move(user));
}

}  // namespace celos::js
