#include "ui/html.h"

#include <boost/json.hpp>
#include <fmt/format.h>

namespace celos {

HttpServerResponse html_response(int status, std::string body) {
  HttpServerResponse response;
  response.status = status;
  response.content_type = "text/html; charset=utf-8";
  response.body = std::move(body);
  response.headers["Cache-Control"] = "no-store";
  return response;
}

std::string celos_error_text(const HttpResponse& response) {
  boost::system::error_code ec;
  const boost::json::value body = boost::json::parse(response.body, ec);
  if (!ec && body.is_object()) {
    if (const auto* e = body.as_object().if_contains("error"); e && e->is_string()) {
      return std::string(e->as_string());
    }
  }
  return fmt::format("HTTP {} {}", response.status, response.body.substr(0, 200));
}

}  // namespace celos
