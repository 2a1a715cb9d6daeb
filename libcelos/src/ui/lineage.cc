#include "ui/lineage.h"

#include <boost/json.hpp>
#include <fmt/format.h>

namespace celos {
namespace {

namespace json = boost::json;

std::string slot_key(const json::value& ref) {
  const json::object& o = ref.as_object();
  return fmt::format("{}@{}", std::string_view(o.at("workflow").as_string()),
                     std::string_view(o.at("time").as_string()));
}

int http_status(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalid:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    default:
      return 502;
  }
}

HttpServerResponse json_reply(int status, const json::value& body) {
  HttpServerResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = json::serialize(body);
  return response;
}

std::string names(const json::value& list) {
  std::string out;
  for (const json::value& id : list.as_array()) {
    if (!out.empty()) out += ", ";
    out += html_escape(std::string_view(id.as_string()));
  }
  return out.empty() ? "—" : out;
}

}  // namespace

HttpServerResponse ui_lineage(CelosApiReader& reader, const SlotId& slot) {
  auto text =
      reader.get_json(fmt::format("/api/v1/lineage?id={}&time={}", url_encode(slot.workflow),
                                  url_encode(format_time(slot.time))));
  if (!text) return json_reply(http_status(text.error()), {{"error", text.error().message}});
  try {
    const json::object lineage = json::parse(*text).as_object();
    json::array upstream, downstream;
    for (const json::value& in : lineage.at("inputs").as_array()) {
      const json::value& producer = in.as_object().at("producer");
      if (!producer.is_null()) upstream.emplace_back(slot_key(producer));
    }
    for (const json::value& out : lineage.at("outputs").as_array()) {
      for (const json::value& c : out.as_object().at("consumers").as_array()) {
        downstream.emplace_back(slot_key(c));
      }
    }
    return json_reply(200, {{"upstream", std::move(upstream)},
                            {"downstream", std::move(downstream)},
                            {"lineage", lineage}});
  } catch (const std::exception& e) {
    return json_reply(502, {{"error", fmt::format("unexpected lineage answer: {}", e.what())}});
  }
}

HttpServerResponse ui_datasets(CelosApiReader& reader) {
  HttpServerResponse response;
  response.content_type = "text/html; charset=utf-8";
  auto text = reader.get_json("/api/v1/datasets");
  std::string body =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Datasets</title></head>\n"
      "<body style=\"font-family: sans-serif; font-size: 12px\"><p><a href=\"ui\">&larr; grid</a>"
      "</p><h1>Datasets</h1>\n";
  if (!text) {
    response.status = http_status(text.error());
    response.body =
        body + "<p id=\"error\">" + html_escape(text.error().message) + "</p></body></html>\n";
    return response;
  }
  try {
    body +=
        "<table id=\"datasets\" border=\"1\" cellspacing=\"0\" cellpadding=\"3\">\n"
        "<tr><th>dataset</th><th>path</th><th>done flag</th><th>producers</th>"
        "<th>consumers</th></tr>\n";
    const json::value parsed = json::parse(*text);  // outlives the loop over its parts
    for (const json::value& d : parsed.as_object().at("datasets").as_array()) {
      const json::object& o = d.as_object();
      const std::string fs(o.at("fs").as_string());
      body += fmt::format(
          "<tr data-dataset=\"{}\"><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td>"
          "<td>{}</td></tr>\n",
          html_escape(std::string_view(o.at("id").as_string())),
          html_escape(std::string_view(o.at("id").as_string())), html_escape(fs),
          html_escape(std::string_view(o.at("path").as_string())),
          html_escape(std::string_view(o.at("doneFlag").as_string())), names(o.at("producers")),
          names(o.at("consumers")));
    }
    body += "</table>\n</body></html>\n";
  } catch (const std::exception& e) {
    response.status = 502;
    body += "<p id=\"error\">unexpected answer from celos-server</p></body></html>\n";
  }
  response.body = std::move(body);
  return response;
}

}  // namespace celos
