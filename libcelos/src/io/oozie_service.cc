// The Oozie external service over the Oozie Web Services API v2 (SPEC §7.1).
#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/dataset.h"
#include "celos/hadoop.h"

namespace celos {

namespace {

namespace json = boost::json;

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string configuration_xml(const std::map<std::string, std::string>& properties) {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configuration>\n";
  for (const auto& [name, value] : properties) {
    xml += fmt::format("  <property><name>{}</name><value>{}</value></property>\n",
                       xml_escape(name), xml_escape(value));
  }
  xml += "</configuration>\n";
  return xml;
}

Result<std::string> json_string_field(const std::string& body, const char* field,
                                      const std::string& what) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (!ec && v.is_object()) {
    if (const json::value* f = v.as_object().if_contains(field); f && f->is_string()) {
      return std::string(f->as_string());
    }
  }
  std::string shown = body.size() > 200 ? body.substr(0, 200) + "..." : body;
  return fail(fmt::format("{}: no \"{}\" in the answer: {}", what, field, shown));
}

class OozieExternalService : public ExternalService {
 public:
  OozieExternalService(std::shared_ptr<HttpClient> http, std::string url,
                       std::map<std::string, std::string> defaults,
                       OoziePropertiesFunction properties_for_slot, std::string user)
      : http_(std::move(http)),
        url_(std::move(url)),
        defaults_(std::move(defaults)),
        properties_for_slot_(std::move(properties_for_slot)),
        user_(std::move(user)) {
    while (url_.ends_with('/')) url_.pop_back();
  }

  Result<std::string> submit(const SlotId& slot) override { return submit_with(slot, {}); }

  // Datasets: `${inputs.<id>}` in property values becomes the slot's input paths.
  Result<std::string> submit_with(const SlotId& slot, const SubmitContext& context) override {
    std::map<std::string, std::string> own;
    if (properties_for_slot_) {
      auto computed = properties_for_slot_(slot);
      if (!computed) return tl::unexpected(computed.error());
      own = std::move(*computed);
    }
    auto properties = oozie_slot_properties(defaults_, own, slot.workflow, slot.time);
    for (auto& [name, value] : properties) value = replace_variables(value, context.variables);
    // Oozie runs the job as the user.name of its configuration.
    if (!user_.empty() && !properties.contains("user.name")) properties["user.name"] = user_;

    HttpRequest request;
    request.method = "POST";
    request.url = url_ + "/v2/jobs" + user_query('?');
    request.headers = {{"Content-Type", "application/xml;charset=UTF-8"}};
    request.body = configuration_xml(properties);
    std::string what = fmt::format("Oozie submit of {}", to_string(slot));
    auto response = http_->send(request);
    if (!response) return fail(fmt::format("{}: {}", what, response.error().message));
    if (response->status != 201 && response->status != 200) {
      return oozie_error(what, request, *response);
    }
    return json_string_field(response->body, "id", what);
  }

  Result<void> start(const SlotId& slot, const std::string& external_id) override {
    HttpRequest request = job_request("PUT", external_id, "action=start");
    std::string what = fmt::format("Oozie start of {} ({})", external_id, to_string(slot));
    auto response = http_->send(request);
    if (!response) return fail(fmt::format("{}: {}", what, response.error().message));
    if (response->status != 200) return oozie_error(what, request, *response);
    return {};
  }

  Result<ExternalStatus> status(const SlotId& slot, const std::string& external_id) override {
    auto text = job_status(slot, external_id);
    if (!text) return tl::unexpected(text.error());
    if (*text == "PREP" || *text == "RUNNING") return ExternalStatus::kRunning;
    if (*text == "SUCCEEDED") return ExternalStatus::kSuccess;
    if (*text == "KILLED" || *text == "FAILED" || *text == "SUSPENDED") {
      return ExternalStatus::kFailure;
    }
    return fail(fmt::format("Oozie job {} ({}) has an unknown status '{}'", external_id,
                            to_string(slot), *text));
  }

  Result<void> kill(const SlotId& slot, const std::string& external_id) override {
    HttpRequest request = job_request("PUT", external_id, "action=kill");
    std::string what = fmt::format("Oozie kill of {} ({})", external_id, to_string(slot));
    auto response = http_->send(request);
    if (!response) return fail(fmt::format("{}: {}", what, response.error().message));
    if (response->status == 200) return {};
    // Oozie refuses to kill a job that has already ended; that is not an error for us.
    if (auto text = job_status(slot, external_id);
        text && (*text == "SUCCEEDED" || *text == "KILLED" || *text == "FAILED")) {
      return {};
    }
    return oozie_error(what, request, *response);
  }

  std::string describe() const override { return "oozie " + url_; }
  std::string_view kind() const override { return "oozie"; }

 private:
  Result<std::string> job_status(const SlotId& slot, const std::string& external_id) {
    HttpRequest request = job_request("GET", external_id, "show=info");
    std::string what = fmt::format("Oozie status of {} ({})", external_id, to_string(slot));
    auto response = http_->send(request);
    if (!response) return fail(fmt::format("{}: {}", what, response.error().message));
    if (response->status != 200) return oozie_error(what, request, *response);
    return json_string_field(response->body, "status", what);
  }

  HttpRequest job_request(const std::string& method, const std::string& id,
                          const std::string& query) const {
    HttpRequest request;
    request.method = method;
    request.url = fmt::format("{}/v2/job/{}?{}{}", url_, url_encode(id), query, user_query('&'));
    if (method == "PUT") request.headers = {{"Content-Type", "application/xml;charset=UTF-8"}};
    return request;
  }

  // Oozie's simple (pseudo) authentication takes the user from the query string.
  std::string user_query(char separator) const {
    return user_.empty() ? "" : fmt::format("{}user.name={}", separator, url_encode(user_));
  }

  static tl::unexpected<Error> oozie_error(const std::string& what, const HttpRequest& request,
                                           const HttpResponse& response) {
    std::string code = response.header("oozie-error-code");
    std::string message = response.header("oozie-error-message");
    std::string detail;
    if (!code.empty() || !message.empty()) {
      detail = fmt::format("{} {}", code, message);
    } else {
      detail = response.body.size() > 200 ? response.body.substr(0, 200) + "..." : response.body;
    }
    return fail(fmt::format("{}: {} {} answered HTTP {}: {}", what, request.method, request.url,
                            response.status, detail));
  }

  std::shared_ptr<HttpClient> http_;
  std::string url_;
  std::map<std::string, std::string> defaults_;
  OoziePropertiesFunction properties_for_slot_;
  std::string user_;
};

}  // namespace

std::map<std::string, std::string> oozie_slot_properties(
    const std::map<std::string, std::string>& defaults,
    const std::map<std::string, std::string>& workflow_properties, const std::string& workflow_id,
    Time slot_time) {
  std::map<std::string, std::string> out;
  // Time variables are replaced in defaults too: a default such as an output directory with
  // ${year} means the slot's year, never the literal text.
  for (const auto* layer : {&defaults, &workflow_properties}) {
    for (const auto& [name, value] : *layer) out[name] = replace_time_variables(value, slot_time);
  }
  CivilTime c = to_civil(slot_time);
  out["year"] = fmt::format("{:04}", c.year);
  out["month"] = fmt::format("{:02}", c.month);
  out["day"] = fmt::format("{:02}", c.day);
  out["hour"] = fmt::format("{:02}", c.hour);
  out["minute"] = fmt::format("{:02}", c.minute);
  out["second"] = fmt::format("{:02}", c.second);
  out["celosWorkflowName"] = workflow_id + "@" + format_time_short(slot_time);
  return out;
}

ExternalServicePtr make_oozie_external_service(std::shared_ptr<HttpClient> http, std::string url,
                                               std::map<std::string, std::string> defaults,
                                               OoziePropertiesFunction properties_for_slot,
                                               std::string user) {
  return std::make_shared<OozieExternalService>(std::move(http), std::move(url),
                                                std::move(defaults),
                                                std::move(properties_for_slot), std::move(user));
}

}  // namespace celos
