// A SchedulerWorld with celos::Api in front of it, called as the HTTP server calls it (a parsed
// request, no socket): the world of the API's handler tests.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <boost/json.hpp>

#include "celos/api.h"
#include "testing/scheduler_world.h"

namespace celos::testing {

class ApiWorld : public SchedulerWorld {
 public:
  using SchedulerWorld::SchedulerWorld;

  std::unique_ptr<Api> api;  // made by serve()
  std::string remote;        // the peer address of the requests ("" = none)

  // (Re)makes the Api over the world's scheduler.
  void serve(ApiOptions options = {});

  // A request from `remote` (for Api::handle_group; call() makes and answers one).
  HttpServerRequest request(const std::string& method, const std::string& target,
                            std::map<std::string, std::string> headers = {}) const;
  HttpServerResponse call(const std::string& method, const std::string& target,
                          std::map<std::string, std::string> headers = {});
  // call(), requiring `status` and a JSON answer, parsed.
  boost::json::value call_json(const std::string& method, const std::string& target,
                               int status = 200, std::map<std::string, std::string> headers = {});
};

}  // namespace celos::testing
