// The Oozie external service over the Oozie Web Services API v2 (SPEC §7.1).
#include <boost/json.hpp>
#include <fmt/format.h>

#include "celos/dataset.h"
#include "celos/hadoop.h"
#include "celos/utf8.h"

namespace celos {

namespace {

namespace json = boost::json;

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
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
  std::string shown = clipped(body, 200);
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
    if (!response) return transport_error(what, response.error());
    if (response->status != 201 && response->status != 200) {
      // 4xx: Oozie refused this job (bad configuration): a failed attempt of the slot. 5xx:
      // Oozie is unwell; the slot stays READY and is submitted again (SPEC §16).
      auto error = oozie_error(what, request, *response);
      if (response->status >= 400 && response->status < 500)
        error.value().code = ErrorCode::kInvalid;
      return error;
    }
    return json_string_field(response->body, "id", what);
  }

  Result<void> start(const SlotId& slot, const std::string& external_id) override {
    HttpRequest request = job_request("PUT", external_id, "action=start");
    std::string what = fmt::format("Oozie start of {} ({})", external_id, to_string(slot));
    auto response = http_->send(request);
    if (!response) return transport_error(what, response.error());
    if (response->status != 200) return oozie_error(what, request, *response);
    return {};
  }

  Result<ExternalStatus> status(const SlotId& slot, const std::string& external_id) override {
    auto text = job_status(slot, external_id);
    if (!text) return tl::unexpected(text.error());
    return status_of(slot, external_id, *text);
  }

  // SPEC §16: the job list filtered by id, page by page, in chunks of ids that keep the URL
  // short; a failed list call or a job missing from it falls back to one call per job.
  std::map<std::string, Result<ExternalStatus>> status_many(const std::vector<Job>& jobs) override {
    std::map<std::string, Result<ExternalStatus>> out;
    for (std::size_t from = 0; from < jobs.size(); from += kListChunk) {
      const std::size_t to = std::min(jobs.size(), from + kListChunk);
      auto listed = list_jobs(jobs, from, to);
      if (!listed && listed.error().code == ErrorCode::kUnavailable) {
        for (std::size_t i = from; i < jobs.size(); ++i) {
          out.emplace(jobs[i].external_id, tl::unexpected(listed.error()));
        }
        return out;  // Oozie is down: asking job by job would only wait longer
      }
      for (std::size_t i = from; i < to; ++i) {
        const Job& job = jobs[i];
        const std::string* text = nullptr;
        if (listed) {
          if (auto it = listed->find(job.external_id); it != listed->end()) text = &it->second;
        }
        out.emplace(job.external_id, text ? status_of(job.slot, job.external_id, *text)
                                          : status(job.slot, job.external_id));
      }
    }
    return out;
  }
  ServiceTraits traits() const override {
    return {.batches_status = true, .status_batch_limit = kListChunk};
  }

  Result<void> kill(const SlotId& slot, const std::string& external_id) override {
    HttpRequest request = job_request("PUT", external_id, "action=kill");
    std::string what = fmt::format("Oozie kill of {} ({})", external_id, to_string(slot));
    auto response = http_->send(request);
    if (!response) return transport_error(what, response.error());
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
  std::string endpoint() const override { return "oozie " + url_; }

 private:
  Result<std::string> job_status(const SlotId& slot, const std::string& external_id) {
    HttpRequest request = job_request("GET", external_id, "show=info");
    std::string what = fmt::format("Oozie status of {} ({})", external_id, to_string(slot));
    auto response = http_->send(request);
    if (!response) return transport_error(what, response.error());
    if (response->status != 200) return oozie_error(what, request, *response);
    return json_string_field(response->body, "status", what);
  }

  static constexpr std::size_t kListChunk = 50;

  static Result<ExternalStatus> status_of(const SlotId& slot, const std::string& external_id,
                                          const std::string& text) {
    // PREP: submitted, not started yet (a crash between record and start): the step starts it.
    if (text == "PREP") return ExternalStatus::kSubmitted;
    if (text == "RUNNING") return ExternalStatus::kRunning;
    if (text == "SUCCEEDED") return ExternalStatus::kSuccess;
    if (text == "KILLED" || text == "FAILED" || text == "SUSPENDED") {
      return ExternalStatus(JobState::kFailure,
                            fmt::format("Oozie job {} ended {}", external_id, text));
    }
    return fail(fmt::format("Oozie job {} ({}) has an unknown status '{}'", external_id,
                            to_string(slot), text));
  }

  // id -> status text of jobs[from, to) as Oozie's job list reports them.
  Result<std::map<std::string, std::string>> list_jobs(const std::vector<Job>& jobs,
                                                       std::size_t from, std::size_t to) {
    std::string filter;
    for (std::size_t i = from; i < to; ++i) {
      if (!filter.empty()) filter += ';';
      filter += "id=" + jobs[i].external_id;
    }
    std::map<std::string, std::string> out;
    for (std::size_t offset = 1;; offset += kListChunk) {
      HttpRequest request;
      request.url = fmt::format("{}/v2/jobs?jobtype=wf&filter={}&offset={}&len={}{}", url_,
                                url_encode(filter), offset, kListChunk, user_query('&'));
      const std::string what = fmt::format("Oozie job list of {} jobs", to - from);
      auto response = http_->send(request);
      if (!response) return transport_error(what, response.error());
      if (response->status != 200) return oozie_error(what, request, *response);
      boost::system::error_code ec;
      json::value v = json::parse(response->body, ec);
      const json::object* o = ec ? nullptr : v.if_object();
      const json::value* list = o ? o->if_contains("workflows") : nullptr;
      if (!list || !list->is_array()) return fail(what + ": no \"workflows\" list in the answer");
      for (const json::value& job : list->get_array()) {
        const json::object* j = job.if_object();
        const json::value* id = j ? j->if_contains("id") : nullptr;
        const json::value* status = j ? j->if_contains("status") : nullptr;
        if (id && id->is_string() && status && status->is_string()) {
          out.emplace(std::string(id->get_string()), std::string(status->get_string()));
        }
      }
      const json::value* total = o->if_contains("total");
      // A total that is not a non-negative integer ends the listing (to_number would throw).
      if (!total || !total->is_int64() || total->get_int64() < 0 ||
          list->get_array().size() < kListChunk ||
          offset - 1 + kListChunk >= static_cast<std::size_t>(total->get_int64())) {
        return out;
      }
    }
  }

  static tl::unexpected<Error> transport_error(const std::string& what, const Error& error) {
    return fail(fmt::format("{}: {}", what, error.message), error.code);
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
      detail = clipped(response.body, 200);
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
                                                std::move(defaults), std::move(properties_for_slot),
                                                std::move(user));
}

}  // namespace celos
