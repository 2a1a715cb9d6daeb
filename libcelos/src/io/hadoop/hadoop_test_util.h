// Helpers shared by the Hadoop unit tests: recorded answers and scripted FakeHttpClient routes.
#pragma once

#include <optional>
#include <string>

#include "celos/http_client.h"
#include "testing/fakes.h"
#include "testing/source_dir.h"
#include "testing/temp_dir.h"

namespace celos::hadoop_test {

// A recorded body from libcelos/src/io/hadoop/testdata/.
inline std::string recorded(const std::string& name) {
  return celos::testing::read_text_file(::celos::testing::source_dir() +
                                        "/libcelos/src/io/hadoop/testdata/" + name);
}

inline HttpResponse answer(int status, std::string body, HttpHeaders headers = {}) {
  return HttpResponse{status, std::move(headers), std::move(body)};
}

// Answers `response` to requests whose method is `method` and whose URL starts with `prefix`.
inline celos::testing::FakeHttpClient::Handler route(std::string method, std::string prefix,
                                                     Result<HttpResponse> response) {
  return [=](const HttpRequest& r) -> std::optional<Result<HttpResponse>> {
    if (r.method == method && r.url.starts_with(prefix)) return response;
    return std::nullopt;
  };
}

}  // namespace celos::hadoop_test
