#include "testing/api_world.h"

#include <catch2/catch.hpp>

namespace celos::testing {

void ApiWorld::serve(ApiOptions options) {
  api.reset();
  api = std::make_unique<Api>(scheduler, std::move(options));
}

HttpServerRequest ApiWorld::request(const std::string& method, const std::string& target,
                                    std::map<std::string, std::string> headers) const {
  HttpServerRequest request;
  request.method = method;
  request.target = target;
  request.remote = remote;
  request.headers = std::move(headers);
  REQUIRE(parse_request_target(target, request.path, request.query));
  return request;
}

HttpServerResponse ApiWorld::call(const std::string& method, const std::string& target,
                                  std::map<std::string, std::string> headers) {
  REQUIRE(api);
  return api->handle(request(method, target, std::move(headers)));
}

boost::json::value ApiWorld::call_json(const std::string& method, const std::string& target,
                                       int status, std::map<std::string, std::string> headers) {
  const auto response = call(method, target, std::move(headers));
  INFO(method << " " << target << " -> " << response.body);
  REQUIRE(response.status == status);
  CHECK(response.content_type == "application/json");
  return boost::json::parse(response.body);
}

}  // namespace celos::testing
