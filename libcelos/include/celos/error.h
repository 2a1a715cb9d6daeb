// Errors as values. Failures of the outside world (HDFS down, Oozie answering 500, a corrupt
// state file) travel as celos::Error inside celos::Result; exceptions are for bugs and start-up
// failures only.
#pragma once

#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace celos {

// What kind of failure, so that the HTTP layer can answer 400/404 and the scheduler can tell
// "the outside world is down" from "the caller asked for something wrong".
enum class ErrorCode {
  kFailed,       // an operation of the outside world failed (I/O, HTTP, a process)
  kInvalid,      // bad input or an illegal transition (HTTP 400)
  kNotFound,     // unknown workflow or slot (HTTP 404)
  kCorrupt,      // stored data that cannot be read back (a corrupt state file)
  kUnavailable,  // the outside world could not be reached or did not answer in time (a
                 // connection refused, a timeout): the step stops asking that endpoint
};

struct Error {
  std::string message;
  ErrorCode code = ErrorCode::kFailed;
};

template <class T>
using Result = tl::expected<T, Error>;

// Shorthand for returning a failure: `return fail("cannot read {}", path);` style callers
// format the message themselves (fmt::format) and pass it here.
[[nodiscard]] inline tl::unexpected<Error> fail(std::string message,
                                                ErrorCode code = ErrorCode::kFailed) {
  return tl::unexpected<Error>(Error{std::move(message), code});
}

}  // namespace celos
